"""Iron Law Labs grading engine.

The engine knows nothing about a particular lab: a lab is a folder under
``assignments/`` with a ``lab.toml`` manifest, a reference under
``solutions/`` and hidden tests under ``tests/``.  See ``labs.py``.
"""

__version__ = "0.1.0"
