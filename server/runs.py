"""A record on disk of every background job of this machine's servers, so a run that a server took with it when
it ended (``kill -9``, a crash, a restart) can be named to the student who started it.

A browser session's state lives in the server's memory and is gone with it; what the browser keeps is the
page's address. The Training lab puts the job's id in it (``train.run=<id>``) and the job writes a small JSON file
named by that id: its kind, its settings, the server's pid and start time, how far it got, and how it ended. A
new session that finds an id in its address but no job of its own reads the file (:func:`read`) and
:func:`fate` says what became of the run: ``"lost"`` (the record says running, but the server process that ran
it is gone), ``"closed"`` (ended when its tab closed or reloaded, or is ending so now), ``"ended"`` (finished,
stopped or failed in a session that has since gone). The page words it.

Where: ``EXPLORER_RUNS_DIR``, default ``<temp dir>/transformer-explorer-runs`` (it outlives a server restart,
not a reboot; nothing in it is needed for the app to work). Records older than :data:`KEEP_S` are removed when a
new one is written. Writes are atomic (a temporary file, then ``os.replace``), ids are checked (hex only), and
every failure to read or write is ignored: a record is a courtesy, never a reason for a run to fail.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Optional

ENV_DIR = "EXPLORER_RUNS_DIR"
KEEP_S = 2 * 24 * 3600  # records older than two days are removed
WRITE_EVERY_S = 2.0  # a running job's progress is written at most this often
_ID = re.compile(r"[0-9a-f]{8,64}")
#: This server process: its pid and a random id (a pid can be reused after a reboot, the id cannot).
SERVER = {"pid": os.getpid(), "server": uuid.uuid4().hex}
_LOCK = threading.Lock()


def runs_dir() -> Path:
    return Path(os.environ.get(ENV_DIR) or Path(tempfile.gettempdir()) / "transformer-explorer-runs")


def valid_id(run_id: Any) -> bool:
    return isinstance(run_id, str) and bool(_ID.fullmatch(run_id))


def _path(run_id: str) -> Path:
    return runs_dir() / f"{run_id}.json"


def write(run_id: str, **fields: Any) -> None:
    """Create or update the record of ``run_id`` with ``fields`` (merged into what is there); this server's pid
    and id are stamped on it. Never raises."""
    if not valid_id(run_id):
        return
    with _LOCK:
        try:
            folder = runs_dir()
            folder.mkdir(parents=True, exist_ok=True)
            old = read(run_id)
            record = old or {"id": run_id, "created": time.time()}
            record.update(fields, **SERVER, updated=time.time())
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f)
            os.replace(tmp, _path(run_id))
            if old is None:  # a new record: the old ones go
                _prune(folder)
        except (OSError, TypeError, ValueError):
            pass


def _prune(folder: Path) -> None:
    cutoff = time.time() - KEEP_S
    for path in folder.glob("*.json"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            pass


def read(run_id: Any) -> Optional[dict]:
    """The record of ``run_id``, or None (no such record, a bad id, an unreadable file)."""
    if not valid_id(run_id):
        return None
    try:
        with open(_path(run_id), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def process_alive(pid: Any) -> bool:
    """A process with this pid exists and is not a zombie (an ended process its parent has not collected)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    if not Path("/proc").is_dir():  # macOS: no zombie check
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # it just ended
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")  # the state field follows the command name


def fate(record: Optional[dict]) -> Optional[str]:
    """What became of a run whose record this is, seen from a session that does not hold it:

    * ``"lost"``: recorded as running by a server process that no longer exists (it was killed or restarted);
    * ``"closed"``: it ended because its tab closed or was reloaded, or it is still running in this server for a
      session that has gone (its watchdog stops it within a second);
    * ``"ended"``: it finished, was stopped or failed, in a session that has gone since;
    * None: no record, or it runs in another server process that is still alive (not this session's business).
    """
    if not record:
        return None
    status = record.get("status")
    if status == "running":
        if record.get("server") == SERVER["server"]:
            return "closed"
        return None if process_alive(record.get("pid")) else "lost"
    if status == "closed":
        return "closed"
    return "ended" if status in ("finished", "stopped", "cancelled", "failed") else None
