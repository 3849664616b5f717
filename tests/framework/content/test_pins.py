"""environment.yml and requirements.lock pin the same exact versions."""

import re

from autograder.core.labs import find_root

ROOT = find_root()
PIN = re.compile(r"^\s*(?:-\s+)?([A-Za-z0-9_.\-]+)==([^\s#]+)\s*$")


def pins(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = PIN.match(line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_environment_yml_agrees_with_lock():
    lock = pins((ROOT / "requirements.lock").read_text())
    env = pins((ROOT / "environment.yml").read_text())
    assert lock, "requirements.lock pins nothing"
    assert lock == env, {k: (lock.get(k), env.get(k)) for k in set(lock) | set(env) if lock.get(k) != env.get(k)}


def test_torch_pinned_to_the_cpu_build_version():
    assert pins((ROOT / "requirements.lock").read_text())["torch"] == "2.13.0"
    assert "torch==2.13.0" in (ROOT / "pyproject.toml").read_text()


def test_every_requirement_is_pinned():
    lock = pins((ROOT / "requirements.lock").read_text())
    for name in ("numpy", "pytest", "pytest-timeout", "rich", "matplotlib", "pyseccomp", "nbclient", "ipykernel"):
        assert name in lock, f"{name} is not pinned"
