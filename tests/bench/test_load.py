"""A class on one server, bounded: simulated students (websocket clients speaking Streamlit's protocol, loopback
only, ``bench/loadsim.py``) click through pages on their own small configs while two others train and one asks for
the slider maxima.

What must hold (no timing asserts: the machine is shared):

* no exception anywhere (students, trainers, the maxima request) and none in the server's log;
* every small-config page view finishes with its charts;
* the maxima request is refused with its cost (the memory it would need and the budget), never attempted;
* the training queue moves: with one slot, the second trainer waits with its place shown; when the first
  trainer's tab closes, its run stops and the second run goes through to its last step.

The full-size version (30 students, 4 trainers) is ``bench/bench_load.py``.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest
import torch

from bench.bench_load import maxima, student
from bench.loadsim import MAXIMA, Server, Student, follow_run, queued, step_of
from engine import CausalLM
from tests.page_helpers import state_config

pytestmark = pytest.mark.slow  # several minutes on a loaded 2-core machine (one server, 13 clients)

STUDENTS, VIEWS = 10, 2
SHORT_RUN = 20  # steps of the run that waits in line (the sidebar's default model)
LONG_RUN = 5000  # steps of the run that holds the slot until its tab closes
TIMEOUT_S = 1500  # the whole scenario; every single request has its own timeout too


async def start_run(port: int, steps: int) -> tuple[Student, dict]:
    """Open the Training lab in English, type ``steps``, press Start; returns the open tab and its record."""
    s = await Student(port).__aenter__()
    page = await s.run({"ui.lang": "English"}, "train", timeout=600)
    page = await s.type_number("Steps", steps, page)
    view = await s.click("▶ Start", page)
    record = {"queued": queued(view), "step": step_of(view) or 0, "result": None, "finished_run": False,
              "exceptions": page.exceptions + view.exceptions, "progress": view.progress + view.alerts}
    return s, record


async def scenario(port: int) -> dict:
    # 1. the first trainer's long run takes the only slot and runs
    first, long_run = await start_run(port, LONG_RUN)
    deadline = time.perf_counter() + 600
    await follow_run(first, long_run, lambda: long_run["step"] < 1 and time.perf_counter() < deadline)
    # 2. the second trainer presses Start: it must wait in line, with its place shown
    second, short_run = await start_run(port, SHORT_RUN)
    # 3. the class arrives, and one student asks for the maxima, while both tabs stay open
    views, refused = [], {}
    waiting = asyncio.create_task(follow_run(second, short_run, lambda: not short_run["finished_run"]))
    await asyncio.gather(maxima(port, refused), *[student(port, i, VIEWS, views) for i in range(STUDENTS)])
    # 4. the first trainer closes its tab: its run stops, and the second run must go through to its last step
    await first.__aexit__(None, None, None)
    await asyncio.wait_for(waiting, 900)
    await second.__aexit__(None, None, None)
    return {"views": views, "maxima": refused, "long": long_run, "short": short_run}


def test_a_class_browses_while_runs_go_through_the_queue_and_the_maxima_are_refused():
    server = Server({"EXPLORER_MAX_HEAVY_JOBS": "1"})
    try:
        result = asyncio.run(asyncio.wait_for(scenario(server.port), TIMEOUT_S))
    finally:
        log = server.close()
    views, refused, long_run, short_run = result["views"], result["maxima"], result["long"], result["short"]

    assert "Traceback" not in log, log[-3000:]
    assert not [v for v in views if v["exceptions"]], [v for v in views if v["exceptions"]]
    assert not refused["exceptions"] and not long_run["exceptions"] and not short_run["exceptions"]

    # every small-config page view finished with its charts
    assert len(views) == STUDENTS * VIEWS
    assert all(v["finished"] and v["charts"] > 0 for v in views), [v for v in views if not v["charts"]]

    # the maxima: refused with what they would cost and the budget, before any model was built; the cost is the
    # float32 weights of the model the sliders describe (counted on the meta device: no memory used)
    message = refused["refusal"] or ""
    need = re.search(r"need about ([\d,]+) MB", message)
    allowed = re.search(r"allows ([\d,]+) MB", message)
    assert need and allowed, message
    need, allowed = (int(m.group(1).replace(",", "")) for m in (need, allowed))
    config, _ = state_config(**MAXIMA)
    with torch.device("meta"):
        weights_mb = 4 * CausalLM(config).num_parameters() / 2**20
    assert abs(need - weights_mb) <= 1 and need > allowed, (message, weights_mb)

    # the queue: the first run was running (step >= 1) when the second pressed Start, so the second waited ...
    assert long_run["step"] >= 1
    assert short_run["queued"], short_run
    # ... and once the first tab closed, the second run went from the line to its last step
    assert short_run["finished_run"], short_run
    assert (short_run["result"] or "").startswith(f"Finished all {SHORT_RUN} steps."), short_run
