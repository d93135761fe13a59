"""Once per server process, before sessions can race: compile every page script and make ``ast.parse`` safe.

CPython 3.11 keeps the recursion depth of its AST constructor in one per-interpreter counter (python/cpython#106905,
fixed in 3.12/3.13). Two threads building AST objects at once (``ast.parse``) can interleave when a garbage
collection pass inside one of them lets the other run, and then one of them fails with ``SystemError: AST
constructor recursion depth mismatch``. On a freshly started server twenty sessions arriving together do exactly
that: each session's thread imports libraries (numpy and torch parse signatures with ``ast.parse`` at import
time) and compiles page scripts, all at the same moment.

Three measures, each enough for the case it covers:

* ``.streamlit/config.toml`` turns Streamlit's "magic" off (``runner.magicEnabled = false``; no page relies on
  it): page scripts are then compiled from source, which never builds AST objects, so even test harnesses that
  compile the scripts once per run (``AppTest``) stay out of the race.
* :func:`serialise_ast_parse` puts every ``ast.parse`` of the process behind one lock (the parse itself is
  milliseconds and happens at import time, so the lock costs nothing measurable).
* :func:`warm_up`, called at the top of ``app.py``, compiles every page script into the server's shared
  script cache once, the first time any session runs; other sessions wait for it instead of compiling alongside.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path
from typing import Iterable

_AST_LOCK = threading.RLock()
_WARM_LOCK = threading.Lock()
_warmed = False
_real_parse = ast.parse


def _locked_parse(*args, **kwargs):
    with _AST_LOCK:
        return _real_parse(*args, **kwargs)


_locked_parse.__doc__ = ast.parse.__doc__


def serialise_ast_parse() -> None:
    """Replace ``ast.parse`` by a version that holds a process-wide lock (idempotent)."""
    ast.parse = _locked_parse


def warm_up(page_paths: Iterable[str]) -> None:
    """Compile each page script into Streamlit's shared script cache, once per process (thread-safe).

    The first session's run does the work; sessions that arrive meanwhile wait on the lock, so no two threads
    ever compile a page for the first time together. Outside a Streamlit run (plain import) only the
    ``ast.parse`` lock is installed.
    """
    global _warmed
    serialise_ast_parse()
    if _warmed:
        return
    with _WARM_LOCK:
        if _warmed:
            return
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
        if ctx is not None:
            root = Path(__file__).resolve().parents[1]
            for path in page_paths:
                ctx.pages_manager.get_page_script_byte_code(str(root / path))
        _warmed = True
