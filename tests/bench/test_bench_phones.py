"""bench/bench_phones.py at a tiny size: a real ``streamlit run app.py``, six simulated phones speaking the phone
page's HTTP protocol (no browser), one Next, one answer each, one reveal. No timing asserts: only that every phone
joined, saw the Next and the reveal, and that every answer reached the lecturer's count; and the report's rows."""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from pathlib import Path

from bench.bench_classroom import LagProbe
from bench.bench_phones import Single, rows_of, run_size


def test_six_phones_follow_answer_and_see_the_reveal():
    args = argparse.Namespace(browsers=0, nexts=1, idle_s=1.0, answer_window_s=1.0)
    lag = LagProbe()
    with tempfile.TemporaryDirectory() as tmp:
        setup = Single(Path(tmp))
        try:
            r = asyncio.run(run_size(setup, 6, args, random.Random(0), lag))
        finally:
            setup.close()
            lag.stop()
    assert len(r["join_s"]) == 6 and not r["join_errors"]
    assert len(r["next_s"]) == 6 and r["next_missing"] == 0
    assert r["answers"] == 6 and r["counted"] == 6 and r["final_count"] == 6
    assert len(r["reveal_s"]) == 6 and r["reveal_missing"] == 0
    assert r["phone_error_n"] == 0, r["phone_errors"]
    r["nexts"] = 1
    rows = rows_of(r)
    assert len(rows) == 7 and all(row.startswith("| 6 |") for row in rows)
