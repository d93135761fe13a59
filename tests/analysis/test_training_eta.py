"""The Training lab's time left (analysis.training.time_left) against hand-computed values: the pace of the
latest steps, the validations left at their own measured cost, the measurement after the steps, its phases."""

from __future__ import annotations

import pytest

from analysis.training import time_left
from engine.train import StepInfo, TrainConfig

CFG = TrainConfig(steps=20, eval_every=5, eval_batches=8, batch_size=2, seq_len=4, warmup_steps=0)
EVAL_TOKENS = 8 * 2 * 4  # eval_batches * batch_size * seq_len


def log(gaps: list[float], cfg: TrainConfig = CFG) -> list[StepInfo]:
    """StepInfos whose elapsed_s grow by ``gaps`` (gaps[0]: start-up, first validation and step 1), with a
    validation loss on every ``eval_every``-th step and at the last step, as the engine reports them."""
    out, elapsed = [], 0.0
    for step, gap in enumerate(gaps, start=1):
        elapsed += gap
        val = 1.0 if (step % cfg.eval_every == 0 or step == cfg.steps) else None
        out.append(StepInfo(step=step, loss=1.0, lr=1e-3, grad_norm=1.0, layer_grad_norms=[1.0], other_grad_norm=0.0,
                            tokens_per_s=1.0, elapsed_s=elapsed, val_loss=val))
    return out


# steps of 0.1 s; the first gap 0.6 s (0.5 s start-up and validation); step 5 validates: 0.1 + 0.3 s
SEVEN = [0.6, 0.1, 0.1, 0.1, 0.4, 0.1, 0.1]


def test_steps_left_at_the_recent_pace_plus_the_validations_left_at_their_measured_cost():
    # 13 steps x 0.1 s + validations at steps 10, 15, 20 x 0.3 s (step 5's extra) = 1.3 + 0.9
    assert time_left(log(SEVEN), CFG) == pytest.approx(2.2)


def test_the_measurement_after_the_steps_is_costed_like_a_validation_per_token():
    # 2 validations' worth of forward tokens at 0.3 s each
    assert time_left(log(SEVEN), CFG, after_tokens=2 * EVAL_TOKENS) == pytest.approx(2.2 + 0.6)


def test_what_earlier_measurements_took_against_their_estimate_scales_the_next():
    assert time_left(log(SEVEN), CFG, after_tokens=2 * EVAL_TOKENS, after_scale=1.5) == pytest.approx(2.2 + 0.9)
    assert time_left(log(SEVEN), CFG, 2 * EVAL_TOKENS, phase="after", phase_elapsed=0.4,
                     after_scale=1.5) == pytest.approx(0.5)


def test_before_any_validation_in_the_run_the_first_steps_extra_is_its_cost():
    # 3 steps: pace 0.1 s (steps 2, 3); validation cost = 0.6 - 0.1 = 0.5 s (start-up and the first validation)
    # 17 steps x 0.1 + validations at 5, 10, 15, 20 x 0.5
    assert time_left(log([0.6, 0.1, 0.1]), CFG) == pytest.approx(1.7 + 2.0)


def test_the_pace_is_that_of_the_latest_window_of_steps():
    # the run slowed from 0.1 s to 0.3 s a step (other runs started): a window of 3 sees only the slow steps
    gaps = [0.6, 0.1, 0.1, 0.1, 0.4, 0.1, 0.3, 0.3, 0.3]
    # 11 steps x 0.3 + validations at 10, 15, 20 at step 5's extra, 0.4 - 0.3 = 0.1 s
    assert time_left(log(gaps), CFG, window=3) == pytest.approx(3.3 + 0.3)
    # with the whole run in the window: mean of steps 2-4 and 6-9 = (0.3 + 0.1 + 0.9) / 7
    pace = (0.1 * 3 + 0.1 + 0.9) / 7
    assert time_left(log(gaps), CFG, window=20) == pytest.approx(11 * pace + 3 * (0.4 - pace))


def test_phases_after_the_steps_count_down_what_is_left_of_them():
    hist = log(SEVEN)  # stopped at step 7, which measured no validation
    after = 2 * EVAL_TOKENS  # 0.6 s
    assert time_left(hist, CFG, after, phase="final_eval", phase_elapsed=0.1) == pytest.approx(0.2 + 0.6)
    assert time_left(hist, CFG, after, phase="final_eval", phase_elapsed=5.0) == pytest.approx(0.6)
    assert time_left(hist, CFG, after, phase="after", phase_elapsed=0.25) == pytest.approx(0.35)
    assert time_left(hist, CFG, after, phase="after", phase_elapsed=9.0) == 0.0  # never below zero
    stopped_on_a_validation = log(SEVEN[:5])  # step 5 measured it: no last validation to wait for
    assert time_left(stopped_on_a_validation, CFG, after, phase="final_eval") == pytest.approx(0.6)


def test_none_before_two_steps_and_zero_at_the_end():
    assert time_left([], CFG) is None and time_left(log([0.6]), CFG) is None
    done = log([0.6] + [0.1] * 3 + [0.4] + [0.1] * 4 + [0.4] + [0.1] * 4 + [0.4] + [0.1] * 4 + [0.4])
    assert len(done) == 20 and time_left(done, CFG) == pytest.approx(0.0)


def test_no_validation_split_and_validation_every_step():
    no_val = TrainConfig(steps=20, eval_every=5, batch_size=2, seq_len=4, val_fraction=0.0, warmup_steps=0)
    gaps = [0.6, 0.1, 0.1, 0.1, 0.1]
    hist = [h.__class__(**{**h.to_dict(), "val_loss": None}) for h in log(gaps, no_val)]
    # 15 steps x 0.1; the measurement after: forward tokens at a third of a step's cost per token
    assert time_left(hist, no_val) == pytest.approx(1.5)
    assert time_left(hist, no_val, after_tokens=3 * 8) == pytest.approx(1.5 + 0.1)  # 3 steps' tokens / 3
    every = TrainConfig(steps=20, eval_every=1, batch_size=2, seq_len=4, warmup_steps=0)
    # every step validates: the pace of steps 2-4 (0.3 s) includes it
    assert time_left(log([0.6, 0.3, 0.3, 0.3], every), every) == pytest.approx(16 * 0.3)
