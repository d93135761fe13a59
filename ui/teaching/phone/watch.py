"""Held polls: a phone that has the class's current view waits here until it changes (``routes.state``).

One watcher per class in this process, alive while at least one phone waits: it reads the class's version
(:func:`ui.teaching.phone.view.version_of`, from the store) every :data:`WATCH_S` seconds and wakes every waiting
phone when it changes. So the lecturer's Next reaches the phones within about a quarter of a second, and three
hundred idle phones cost one small read every quarter second, not three hundred.

When the server is asked to stop (SIGTERM, Ctrl-C: :func:`release_on_exit`), every held poll returns at once
(the phone asks again and finds the server gone, or its successor), so the server does not wait out 25 s polls.
"""

from __future__ import annotations

import asyncio
import faulthandler
import signal
import threading

from starlette.concurrency import run_in_threadpool

from ui.teaching.phone.view import version_of

WATCH_S = 0.25
GRACE_S = 5.0  # a stop signal: seconds the open requests and sockets get before they are cancelled
HARD_S = 30.0  # a stop signal: seconds until the process exits even if something still holds it
MAX_CLASSES = 1000


class Changes:
    """The changes of one class's version, for the phones waiting on it (all in the server's event loop)."""

    def __init__(self, code: str):
        self.code = code
        self.version: tuple | None = None  # the last version read (None: not read yet, or the store is down)
        self.waiters = 0
        self._event = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def wait(self, have: tuple, timeout: float) -> None:
        """Return when the class's version is no longer ``have`` (the version of the phone's view), or after
        ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self.waiters += 1
        try:
            if self._task is None or self._task.done():
                self._task = loop.create_task(self._watch())
            while not _closing and (self.version is None or self.version == have):
                left = deadline - loop.time()
                if left <= 0:
                    return
                try:
                    await asyncio.wait_for(self._event.wait(), left)
                except asyncio.TimeoutError:
                    return
        finally:
            self.waiters -= 1

    async def _watch(self) -> None:
        while self.waiters > 0:
            try:
                now = await run_in_threadpool(version_of, self.code, True)
            except Exception:  # noqa: BLE001 -- the store is down: the held polls time out and ask again
                now = None
            if now is not None and now != self.version:
                self.version = now
                event, self._event = self._event, asyncio.Event()
                event.set()
            await asyncio.sleep(WATCH_S)
        self.version = None  # nobody watches: the next waiter starts from a fresh read


_classes: dict[str, Changes] = {}
_lock = threading.Lock()
_closing = False  # the server is stopping: no poll is held


def _release_all() -> None:
    global _closing
    _closing = True
    with _lock:
        waiting = list(_classes.values())
    for c in waiting:
        c._event.set()


def release_on_exit() -> None:
    """Called once the server runs (``app.py``'s lifespan, in its event loop): a stop signal first releases the
    held polls, then goes to the server's own handler (uvicorn's graceful shutdown waits for open requests).

    The stop is bounded: uvicorn waits for every open connection without limit by default, so the handler gives it
    :data:`GRACE_S` seconds (then it cancels what is left), and if the process is still alive :data:`HARD_S`
    seconds after the signal, it prints every thread's stack to stderr and exits (``faulthandler``): a server
    asked to stop always stops, and says where it hung. The class store loses nothing: every answer is committed
    before its request returns."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        before = signal.getsignal(sig)

        def handler(signum, frame, before=before):
            loop.call_soon_threadsafe(_release_all)
            server_config = getattr(getattr(before, "__self__", None), "config", None)  # uvicorn.Server.handle_exit
            if server_config is not None and getattr(server_config, "timeout_graceful_shutdown", 0) is None:
                server_config.timeout_graceful_shutdown = GRACE_S
            faulthandler.dump_traceback_later(HARD_S, exit=True)
            if callable(before):
                before(signum, frame)

        if threading.current_thread() is threading.main_thread():
            signal.signal(sig, handler)


def changes(code: str) -> Changes:
    with _lock:
        found = _classes.get(code)
        if found is None:
            if len(_classes) >= MAX_CLASSES:
                for k in [k for k, c in _classes.items() if c.waiters == 0]:
                    del _classes[k]
            found = _classes[code] = Changes(code)
        return found
