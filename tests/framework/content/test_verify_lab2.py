"""`autograder verify lab2` passes, sandboxed, exactly as CI runs it for every lab."""

from autograder.cli import main


def test_verify_lab2(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["verify", "lab2"]) == 0, capsys.readouterr().out
