"""What a sandboxed worker loads of the engine: ``calls/`` and ``sandbox/``,
plus core's leaf modules that translate its messages (``i18n``, and the
``files`` helpers it uses) and say what a submission may hold (``limits``),
and nothing that runs on the grader's side.

Everything loaded in the zygote is inherited by every worker and readable by
student code there, so the grader's code (tests, reference paths, the
scorer) must never be in that closure.  Measured from inside a worker.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from autograder.sandbox.backend import SandboxBackend

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")

ALLOWED_PACKAGES = ("autograder.calls", "autograder.sandbox")
ALLOWED_MODULES = {"autograder", "autograder.core", "autograder.core.i18n", "autograder.core.files", "autograder.core.limits"}

PROBE = '''
import sys


def norm(x=None):
    from autograder.core.i18n import _

    _("file {file} is missing from the submission")  # what the worker does to say an error in vi
    return sorted(m for m in sys.modules if m == "autograder" or m.startswith("autograder."))
'''


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_worker_loads_only_calls_and_sandbox(toy_lab, tmp_path, monkeypatch, lang):
    monkeypatch.setenv("IRONLAW_LANG", lang)  # vi: messages are translated in the worker
    (tmp_path / "toy.py").write_text(PROBE)
    backend = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    try:
        loaded, _ = backend.call("norm", (), {})
    finally:
        backend.close()
    assert "autograder.sandbox.worker" in loaded and "autograder.calls.loader" in loaded  # the probe saw them
    outside = [m for m in loaded if m not in ALLOWED_MODULES and not m.startswith(tuple(p + "." for p in ALLOWED_PACKAGES))
               and m not in ALLOWED_PACKAGES]
    assert not outside, f"the worker loaded grader-side engine modules: {outside}"


PRELOADED = '''
import sys


def norm(x=None):
    return [m for m in ("colorsys", "sched") if m in sys.modules]  # imported by neither the toy course nor the worker
'''


def test_a_lab_s_own_preload_list_is_what_its_workers_inherit(toy_lab, tmp_path):
    """``[sandbox] preload`` in lab.toml replaces the course file's list for that lab's zygote."""
    from autograder.sandbox import backend as sandbox_backend

    (tmp_path / "toy.py").write_text(PRELOADED)
    seen = {}
    for preload in (None, ("colorsys",)):
        sandbox_backend.stop_zygote()  # the zygote this process starts next: the lab's
        backend = SandboxBackend(tmp_path, dataclasses.replace(toy_lab.manifest, preload=preload),
                                 toy_lab.assignment_dir)
        try:
            seen[preload] = backend.call("norm", (), {})[0]
        finally:
            backend.close()
            sandbox_backend.stop_zygote()
    assert seen == {None: [], ("colorsys",): ["colorsys"]}
