"""Lesson 5's answer keys (teaching/answers/training.py): questions about the Training lab's run.

Independent side: hand-made runs (a TrainResult with losses written by hand, a RaceResult with hand-made gradient
norms, probe scores by hand) whose right answer is worked out here, and one short real run whose keys are read
back from its own history with plain arithmetic. The keys follow the run: a session's finished job is what they
read, a missing one (the key present, None) raises NeedsRun with every option, and other settings (steps) give
another key.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from teaching.answers.core import REGISTRY, NeedsRun, StepInputs, options
from teaching.answers.training import LOSS_BANDS, POEM_VERDICTS, RISE_BANDS, TRENDS, lab_train_config
from analysis.probes import punctuation_verdict, slot_head
from engine.train import RaceResult, StepInfo, TrainConfig, TrainResult
from teaching.lessons import build_parts

V = 4000  # the sidebar's default vocabulary


def step_info(step: int, loss: float, val: float | None = None, grads=(1.0, 1.0)) -> StepInfo:
    return StepInfo(step=step, loss=loss, lr=1e-3, grad_norm=1.0, layer_grad_norms=list(grads), other_grad_norm=0.0,
                    tokens_per_s=1.0, elapsed_s=float(step), val_loss=val)


def result(losses, initial: float, final: float, grads=None, vals=None) -> TrainResult:
    hist = [step_info(i + 1, x, (vals or {}).get(i + 1), grads[i] if grads else (1.0, 1.0)) for i, x in enumerate(losses)]
    return TrainResult(history=hist, initial_val_loss=initial, final_val_loss=final, stopped=False, elapsed_s=1.0,
                       config=TrainConfig(steps=max(2, len(losses)), warmup_steps=0))


def session_inputs(settings: dict | None = None, **session) -> StepInputs:
    settings = settings or {}
    return StepInputs(settings, lambda: build_parts(settings), session=session)


def run_job(res: TrainResult) -> SimpleNamespace:
    return SimpleNamespace(result=res, model=SimpleNamespace(config=SimpleNamespace(vocab_size=V)), id="job-1")


def key(name: str, s: StepInputs, **args):
    ans = REGISTRY[name](s, **args)
    opts, i = options(ans, name)
    return ans, opts, i


def test_initial_loss_is_the_formula_nearest_the_measured_loss():
    s = session_inputs(**{"train.job": run_job(result([8.0, 7.0], initial=8.31, final=7.0))})
    ans, opts, i = key("run_initial_loss", s)
    assert opts == [0.0, round(math.log(V) / 2, 2), round(math.log(V), 2), round(math.log2(V), 2)]  # ascending
    assert opts[i] == 8.29 and ans.values["initial"] == 8.31
    far = session_inputs(**{"train.job": run_job(result([11.0], initial=11.5, final=11.0))})  # e.g. a large init
    assert key("run_initial_loss", far)[1][key("run_initial_loss", far)[2]] == 11.97  # log2 4000 = 11.97


@pytest.mark.parametrize("initial,final,band", [(8.0, 7.5, "same"), (8.0, 5.6, "lower"), (8.0, 3.9, "half")])
def test_final_loss_band(initial, final, band):
    vals = {1: initial - 0.5 * (initial - final), 2: final}
    s = session_inputs(**{"train.job": run_job(result([7.9, 7.0], initial, final, vals=vals))})
    ans = REGISTRY["run_final_loss"](s)
    assert ans.correct == LOSS_BANDS[band] and len(ans.distractors) == 2
    assert ans.values["drop"] == f"{100 * (1 - final / initial):.1f}"
    assert ans.values["early_step"] == 1 and ans.values["early_share"] == "50.0"  # half the drop by the first validation


@pytest.mark.parametrize("losses,band,rises", [
    ([5, 4, 3, 2], "none", 0),
    ([5, 4, 4.5, 3, 2.9, 2.8, 2.7, 2.6, 2.5, 2.4, 2.3, 2.2], "few", 1),  # 1 of 11 changes: 9 %
    ([5, 4, 4.5, 3, 3.2, 2.5, 2.4, 2.3], "some", 2),  # 2 of 7: 29 %
    ([5, 4, 4.5, 3, 3.2], "many", 2),  # 2 of 4: 50 %
])
def test_loss_rises_counted_by_hand(losses, band, rises):
    s = session_inputs(**{"train.job": run_job(result(losses, 8.0, 2.0))})
    ans = REGISTRY["run_loss_rises"](s)
    assert ans.values["rises"] == rises and ans.correct == RISE_BANDS[band]


def test_punctuation_verdict_by_hand():
    assert punctuation_verdict(0.23, 0.14, 0.08, 0.06, 2e-4, 2e-4, 2.5e-4) == "learned"  # > 2x their share
    assert punctuation_verdict(0.09, 0.07, 0.08, 0.06, 2e-4, 2e-4, 2.5e-4) == "frequency"  # about their share
    assert punctuation_verdict(3e-4, 3e-4, 0.08, 0.06, 2e-4, 2e-4, 2.5e-4) == "not_yet"


def test_slot_head_by_hand():
    pairs = [(13, 0), (14, 1)]  # uniform attention: mean(1/14, 1/15) = 0.0690
    init = [(0, 0, 0.05), (0, 1, 0.06)]
    best = slot_head([(0, 0, 0.10), (0, 1, 0.30), (1, 0, 0.30)], init, pairs)
    assert (best["layer"], best["head"]) == (0, 1)  # ties: the first layer, then the first head
    assert best["uniform"] == pytest.approx((1 / 14 + 1 / 15) / 2) and best["stands_out"]  # 0.30 > 2 x 0.069, 2 x 0.06
    assert not slot_head([(0, 0, 0.10)], init, pairs)["stands_out"]  # 0.10 < 2 x 0.069


def race(pre_grads, post_grads, pre_final: float, post_final: float) -> SimpleNamespace:
    pre = result([5.0] * len(pre_grads), 8.3, pre_final, grads=pre_grads)
    post = result([5.0] * len(post_grads), 8.3, post_final, grads=post_grads)
    return SimpleNamespace(result=RaceResult(pre=pre, post=post), config=SimpleNamespace(num_hidden_layers=4),
                           cfg=pre.config, id="race-1")


def test_race_keys_by_hand():
    # per step, per block (4 blocks); the mean over the two steps is what the profile uses
    post = [(9.0, 0.1, 0.2, 0.4), (9.0, 0.1, 0.2, 0.4)]  # blocks 2..4 grow (block 1 is left out)
    pre = [(4.0, 3.0, 2.0, 1.0), (4.0, 3.0, 2.0, 1.0)]  # shrink
    s = session_inputs(**{"race.job": race(pre, post, 6.28, 6.46)})
    assert REGISTRY["race_winner"](s).correct["en"] == "Pre-Norm"
    ans = REGISTRY["race_profile"](s, placement="post")
    assert ans.correct == TRENDS["grows"] and ans.values["ratio"] == 4.0 and len(ans.distractors) == 3
    assert REGISTRY["race_profile"](s, placement="pre").correct == TRENDS["shrinks"]
    # scores: the rank correlation's distance to each option's range (rho = +1: 0.2 past "no steady trend")
    assert ans.scores[0] == 0 and ans.values["rho"] == "+1.00"
    assert max(ans.scores[1:]) == pytest.approx(-0.2) and min(ans.scores[1:]) == pytest.approx(-1.8)
    wobbly = [(9.0, 0.1, 0.3, 0.2, 0.5, 0.6)] * 2  # blocks 2..6 rise 6x with one dip at block 4: still "grows"
    w = session_inputs(**{"race.job": race([(4.0, 3.0, 2.0, 1.0, 0.9, 0.8)] * 2, wobbly, 6.28, 6.46)})
    assert REGISTRY["race_profile"](w, placement="post").correct == TRENDS["grows"]
    tie = session_inputs(**{"race.job": race(pre, post, 6.40, 6.41)})
    assert REGISTRY["race_winner"](tie).correct["en"].startswith("neither")


def test_no_finished_run_yet_raises_needs_run_with_every_option():
    s = session_inputs(**{"train.job": None, "race.job": None})
    with pytest.raises(NeedsRun) as err:
        REGISTRY["run_final_loss"](s)
    assert err.value.what == "train" and err.value.options == list(LOSS_BANDS.values())
    with pytest.raises(NeedsRun) as err:
        REGISTRY["race_profile"](s, placement="post")
    assert err.value.what == "race" and err.value.options == list(TRENDS.values())
    with pytest.raises(NeedsRun) as err:
        REGISTRY["run_initial_loss"](s)  # its options are formulas of V: known before the run
    assert err.value.options == [0.0, round(math.log(V) / 2, 2), round(math.log(V), 2), round(math.log2(V), 2)]


SHORT = {"train.steps": 20, "train.warmup": 2, "train.batch": 4, "train.seq_len": 32}


@pytest.fixture(scope="module")
def short_run():
    """The reference run (no session) at a short setting of the lab, and the same setting's StepInputs."""
    s = StepInputs(SHORT, lambda: build_parts(SHORT))
    from teaching.answers.training import reference_run

    return s, reference_run(s)


def test_reference_run_is_the_labs_run(short_run):
    s, run = short_run
    cfg = lab_train_config(s)
    assert (cfg.steps, cfg.warmup_steps, cfg.batch_size, cfg.seq_len, cfg.eval_every) == (20, 2, 4, 32, 2)
    assert run.result.steps_done == 20 and run.model.config == s.config
    from teaching.answers.training import reference_run

    assert reference_run(StepInputs(SHORT, lambda: build_parts(SHORT))) is run  # computed once per process
    # its keys read its own numbers
    losses = [h.loss for h in run.result.history]
    rises = sum(b > a for a, b in zip(losses, losses[1:]))
    assert REGISTRY["run_loss_rises"](s).values["rises"] == rises
    ratio = run.result.final_val_loss / run.result.initial_val_loss
    assert REGISTRY["run_final_loss"](s).values["drop"] == f"{100 * (1 - ratio):.1f}"
    assert abs(run.result.initial_val_loss - math.log(V)) < 0.1  # small random weights: a uniform guess


def test_poem_keys_run_on_the_reference_run(short_run):
    s, _ = short_run
    ans = REGISTRY["poem_punctuation"](s)
    assert ans.correct in POEM_VERDICTS.values() and ans.values["n"] > 600
    slot = REGISTRY["poem_slot_head"](s)
    assert slot.correct["en"] in ("yes", "no") and 1 <= slot.values["layer"] <= 2


def test_more_steps_change_the_key(short_run):
    s, run = short_run
    few = {**SHORT, "train.steps": 3, "train.warmup": 0}
    a = REGISTRY["run_final_loss"](StepInputs(few, lambda: build_parts(few)))
    b = REGISTRY["run_final_loss"](s)
    assert a.values["final"] != b.values["final"] and a.values["steps"] == 3
    assert a.correct == LOSS_BANDS["same"]  # 3 steps barely move the loss


def test_reference_race_is_the_labs_race():
    settings = {"train.view": "race", "train.race_steps": 10, "train.race_depth": 4}
    s = StepInputs(settings, lambda: build_parts(settings))
    from teaching.answers.training import reference_race

    r = reference_race(s)
    assert r.config.num_hidden_layers == 4 and r.config.hidden_size == s.config.hidden_size
    assert (r.cfg.steps, r.cfg.warmup_steps, r.cfg.batch_size, r.cfg.seq_len, r.cfg.eval_every) == (10, 1, 8, 32, 2)
    assert r.result.pre.steps_done == r.result.post.steps_done == 10
    win = REGISTRY["race_winner"](s)
    pre, post = r.result.pre.final_val_loss, r.result.post.final_val_loss
    assert win.values["gap"] == round(abs(pre - post), 2)
    assert win.correct["en"] == ("Pre-Norm" if pre < post - 0.02 else "Post-Norm" if post < pre - 0.02 else
                                 win.correct["en"])
