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

:func:`bound_malloc` (also from :func:`warm_up`) tells glibc's allocator to give large blocks back to the system
when they are freed: see there.
"""

from __future__ import annotations

import ast
import ctypes
import os
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


ENV_MALLOC = "EXPLORER_MALLOC_TUNING"
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc <malloc.h>
MMAP_THRESHOLD = 1 << 20  # blocks of 1 MiB and more get their own mapping, unmapped when freed
ARENA_MAX = 2


def bound_malloc() -> bool:
    """Make freed tensor memory go back to the system (glibc only; ``EXPLORER_MALLOC_TUNING=0`` leaves it alone).

    Every session's script runs in its own thread, and glibc gives busy threads their own heap ("arena", up to 8
    per core); its mmap threshold also grows to 32 MiB after large blocks are freed, so the activations of a
    SmolLM2 trace or lens (1-30 MB each) end up inside those heaps, and a heap keeps the pages of what was freed
    for later. The server's resident memory then stays near its peak long after every tab closed. A fixed 1 MiB
    threshold puts every such block in its own mapping, returned when it is freed, and two arenas keep the
    small objects' heaps few. Returns whether the settings were applied.
    """
    if os.environ.get(ENV_MALLOC, "1") == "0":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        ok &= libc.mallopt(_M_TRIM_THRESHOLD, 4 * MMAP_THRESHOLD) == 1
        return bool(ok & (libc.mallopt(_M_ARENA_MAX, ARENA_MAX) == 1))
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to tune
        return False


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
        bound_malloc()
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
        if ctx is not None:
            root = Path(__file__).resolve().parents[1]
            for path in page_paths:
                ctx.pages_manager.get_page_script_byte_code(str(root / path))
        _warmed = True
