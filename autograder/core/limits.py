"""What one submission may hold: the single source of the size limits that
staging enforces, ``lab.toml`` validation checks and the sandbox's spawn
request is sized from (``sandbox/channel.py`` derives its limit from these,
so no submission staging accepts can be too big to reach a worker)."""

MAX_FILE_BYTES = 2 * 2**20  # a student source file larger than this is refused at staging
MAX_FILES = 8  # student_files and support_files together: each travels whole in the spawn request
MAX_NAME_BYTES = 255  # a file name, as a file system allows
