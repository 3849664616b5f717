"""One student call, in either mode: the seam a test calls through, the
in-process backend, the loader that imports a submission, the wire format
and the error kinds. Everything a sandboxed worker loads from the engine
besides sandbox/."""
