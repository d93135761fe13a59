"""bench/bench_classroom.py's pure helpers: the percentile, matching answers to the lecturer's count readings, and the
intervals read from ui/teaching/class_mode.py (no server, no browser, no database)."""

from __future__ import annotations

import math
import re

import pytest

from bench.bench_classroom import ROOT, class_mode_constants, count_latencies, pct


def test_percentile_is_linear_between_ranks():
    assert pct([3.0, 1.0, 2.0], 50) == 2.0
    assert pct([0.0, 10.0], 95) == 9.5
    assert pct([4.0], 95) == 4.0
    assert math.isnan(pct([], 50))


def test_the_kth_event_is_counted_by_the_first_reading_of_at_least_k_at_or_after_it():
    events = [1.0, 1.2, 3.0]
    readings = [(0.5, 0), (1.5, 1), (2.5, 2), (3.5, 3)]  # the second event shows only at 2.5 (a lagging count)
    assert count_latencies(events, readings) == pytest.approx([0.5, 1.3, 0.5])


def test_a_reading_that_saw_the_commit_before_the_call_returned_is_zero_and_uncounted_events_are_left_out():
    # the count reached 1 at 0.9, a moment before the call returned at 1.0, and no later reading: 0
    assert count_latencies([1.0], [(0.9, 1)]) == [0.0]
    # a later reading that includes it is preferred; the second event is never counted
    assert count_latencies([1.0, 2.0], [(0.9, 1), (1.9, 1)]) == pytest.approx([0.9])
    assert count_latencies([2.0, 1.0], []) == []


def test_the_intervals_are_the_apps():
    consts = class_mode_constants()
    src = (ROOT / "ui" / "teaching" / "class_mode.py").read_text()
    found = {name: re.search(rf"^{name}\s*=\s*([0-9.]+)", src, re.M) for name in consts}
    assert found["LECTURER_EVERY_S"] and found["STATE_TTL_S"]  # the lecturer's bar and the shared state cache
    for name, m in found.items():
        if m:  # FOLLOW_EVERY_S went with the Streamlit student path: its default is only the old report's
            assert float(m.group(1)) == consts[name]
