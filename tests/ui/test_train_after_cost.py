"""The Training lab's estimate of the measurement after a run's steps learns from what the latest ones took."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.analysis.test_training_eta import CFG, EVAL_TOKENS, SEVEN, log
from ui import train_common


def test_a_finished_measurement_scales_the_next_estimate(monkeypatch):
    monkeypatch.setattr(train_common, "AFTER_RATIOS", [])
    assert train_common.after_scale() == 1.0
    job = SimpleNamespace(after_tokens=2 * EVAL_TOKENS, done=True, phase="after", error=None,
                          progress_history=log(SEVEN), cfg=CFG, phase_started=10.0, finished=10.9)
    train_common.learn_after_cost(job)  # estimated 0.6 s (two validations' tokens at 0.3 s), took 0.9 s
    assert train_common.AFTER_RATIOS == pytest.approx([1.5])
    for took in (0.6, 1.2, 0.3):
        train_common.learn_after_cost(SimpleNamespace(**{**vars(job), "finished": 10.0 + took}))
    assert train_common.after_scale() == pytest.approx(1.5)  # the median of 1.5, 1, 2, 0.5
    train_common.learn_after_cost(SimpleNamespace(**{**vars(job), "phase": "final_eval"}))  # no measurement ran
    assert len(train_common.AFTER_RATIOS) == 4
