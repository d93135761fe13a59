"""The Interventions page's shared sweep jobs (ui/caches/interventions.py): one computation per key for every
session asking, the server's heavy-job line, progress, and cancel that stops the sweep only when nobody watches."""

from __future__ import annotations

import threading

from server import admission
from ui.caches import interventions as jobs


def _work(calls: list, gate: threading.Event, steps: int = 50):
    def work(progress):
        calls.append(1)
        for i in range(steps):
            gate.wait(0.02)
            progress(i + 1, steps)
        return "done"
    return work


def test_two_sessions_share_one_sweep():
    admission.reset(1)
    calls, gate = [], threading.Event()
    a = jobs.start(("test", "shared"), "test", _work(calls, gate), "session-a")
    b = jobs.start(("test", "shared"), "test", _work(calls, gate), "session-b")
    assert a is b and set(a.watchers) == {"session-a", "session-b"}
    jobs.leave(a, "session-a")  # one Cancel: the other session still waits for it
    gate.set()
    assert a.finished.wait(20)
    assert calls == [1] and not a.cancelled and a.error is None
    assert jobs.result(("test", "shared")) == "done" and jobs.pending(("test", "shared")) is None
    assert a.done == a.total == 50 and a.fraction == 1.0


def test_cancel_by_the_last_watcher_stops_it():
    admission.reset(1)
    calls, gate = [], threading.Event()
    job = jobs.start(("test", "cancel"), "test", _work(calls, gate, steps=10_000), "session-a")
    while job.done < 3:
        job.finished.wait(0.01)
    jobs.leave(job, "session-a")
    assert job.finished.wait(20)
    assert job.cancelled and jobs.result(("test", "cancel")) is None and job.done < 10_000


def test_a_waiting_sweep_leaves_the_line_when_cancelled():
    line = admission.reset(1)
    held = line.enqueue("training run")
    assert line.wait(held)  # the only slot is taken
    try:
        calls = []
        job = jobs.start(("test", "queued"), "test", _work(calls, threading.Event()), "session-a")
        while job.ticket is None or line.ahead(job.ticket) is None:
            job.finished.wait(0.01)
        assert job.started is None and job.ahead() == 0
        jobs.leave(job, "session-a")
        assert job.finished.wait(20)
        assert job.cancelled and calls == []  # it never ran
    finally:
        line.release(held)


def test_an_error_is_kept_for_the_page():
    admission.reset(1)

    def broken(progress):
        raise ValueError("no such layer")
    job = jobs.start(("test", "error"), "test", broken, "session-a")
    assert job.finished.wait(20)
    assert job.error == "ValueError: no such layer" and jobs.result(("test", "error")) is None
