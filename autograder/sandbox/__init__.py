"""Sandboxed execution of student code (grading mode).

grader (trusted: tests, reference, scoring)
  └─ backend.SandboxBackend ──unix socket──> zygote (the course's preload: numpy, torch; no secrets)
                                              └─ fork ─> worker (isolated; loads only the submission)

Empty on purpose: the zygote imports this package first, and must set its
thread variables before anything here imports numpy.
"""
