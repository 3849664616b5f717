"""Sandboxed execution of student code (grading mode).

grader (trusted: tests, reference, scoring)
  └─ SandboxBackend ──unix socket──> zygote (numpy + torch preloaded, no secrets)
                                        └─ fork ─> worker (isolated; loads only the submission)
"""

from autograder.sandbox.client import SandboxBackend, Zygote, shared_zygote, stop_zygote

__all__ = ["SandboxBackend", "Zygote", "shared_zygote", "stop_zygote"]
