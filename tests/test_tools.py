"""The developer tools in tools/ run as modules from the project root (``python -m tools.screenshots``), with no
``sys.path`` insert of their own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_tools_do_not_insert_into_sys_path():
    offenders = [p.name for p in sorted((ROOT / "tools").glob("*.py")) if "sys.path.insert" in p.read_text("utf-8")]
    assert not offenders, f"tools run as `python -m tools.<name>` from the root; remove the sys.path insert: {offenders}"


def test_screenshots_runs_as_a_module_from_the_root():
    proc = subprocess.run([sys.executable, "-m", "tools.screenshots", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--pages" in proc.stdout and "--no-smollm2" in proc.stdout
