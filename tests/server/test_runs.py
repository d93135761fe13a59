"""Run records (server/runs.py): what a session that lost its job is told, from the record alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from server import runs


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(runs.ENV_DIR, str(tmp_path))
    return tmp_path


def _ended_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # reaped: no process has it (pids are not reused this soon)


def test_fate_from_the_record(folder):
    rid = "a1" * 16
    runs.write(rid, kind="train", status="running", step=3, total=10)
    assert runs.read(rid)["pid"] == os.getpid() and runs.fate(runs.read(rid)) == "closed"  # ours, its session gone
    other = {"status": "running", "server": "another", "pid": os.getppid()}
    assert runs.fate(other) is None  # another server that is still alive
    assert runs.fate({**other, "pid": _ended_pid()}) == "lost"  # its server is gone
    for status, fate in (("closed", "closed"), ("finished", "ended"), ("stopped", "ended"), ("cancelled", "ended"),
                         ("failed", "ended"), ("weird", None)):
        runs.write(rid, status=status)
        assert runs.fate(runs.read(rid)) == fate, status
    assert runs.read(rid)["step"] == 3  # updates merge into the record


def test_bad_ids_are_never_paths_and_old_records_go(folder):
    for bad in ("../etc/passwd", "x" * 32, "", None, 12):
        runs.write(bad, status="running")
        assert runs.read(bad) is None
    assert list(folder.iterdir()) == []
    stale = folder / ("b2" * 16 + ".json")
    stale.write_text("{}")
    os.utime(stale, (0, 0))
    runs.write("c3" * 16, status="running")  # a new record removes those older than KEEP_S
    assert [p.name for p in folder.iterdir()] == ["c3" * 16 + ".json"]
