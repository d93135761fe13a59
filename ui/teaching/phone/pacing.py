"""Which phones have the class's current step (the lecturer's pacing line: "18 of 23 phones on this step"),
marked in the class store in batches.

Every state request a phone makes names the step its view shows (``routes.state``: a 200 or a 304 means the
phone has it). The marks are collected here for :data:`FLUSH_S` and written in one transaction per class and step
(``ClassStore.mark_seen``), so a Next that wakes three hundred phones costs one write, not three hundred.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.concurrency import run_in_threadpool

from ui.caches.classroom import store

FLUSH_S = 1.0
log = logging.getLogger(__name__)

_pending: dict[tuple[str, int], set[str]] = {}  # (code, step_seq) -> the students whose phone has that step
_scheduled: asyncio.AbstractEventLoop | None = None  # the loop the next write is scheduled on (None: none is)


def note_seen(code: str, seq: int, student_id: str) -> None:
    """Mark (soon) that this student's phone has step ``seq`` of the class (called in the server's event loop)."""
    global _scheduled
    _pending.setdefault((code, seq), set()).add(student_id)
    loop = asyncio.get_running_loop()
    # a write scheduled on another loop will not run here (that loop stopped: a test's client closed)
    if _scheduled is not loop:
        _scheduled = loop
        loop.call_later(FLUSH_S, lambda: asyncio.ensure_future(_flush()))


async def _flush() -> None:
    global _scheduled, _pending
    batch, _pending, _scheduled = _pending, {}, None
    for (code, seq), ids in batch.items():
        try:
            await run_in_threadpool(store().mark_seen, code, seq, sorted(ids))
        except Exception:  # noqa: BLE001 -- a pacing line a second late is no reason to fail a phone
            log.warning("could not mark %d phones on step %d of class %s", len(ids), seq, code, exc_info=True)
