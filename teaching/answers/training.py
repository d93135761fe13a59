"""Answer keys of lesson 5, "Training a model in front of you" (the Training lab): questions about the run on screen.

The learner predicts, then starts the run, then sees the answer: the keys read the session's finished run
(``StepInputs.session``: ``"train.job"`` / ``"race.job"``, the lab's TrainJob and RaceJob). In the app, while the
session has not finished one (the key is present with the value None), they raise :class:`teaching.answers.core.NeedsRun`.
Outside the app (``python -m teaching.lessons check``, tests) the session is empty and :func:`reference_run` /
:func:`reference_race` train a small deterministic run at the step's settings instead, as the lab would.

Each function is thin: it calls what the lab draws and says (``analysis.training``, ``analysis.probes``,
``analysis.depth``), so the key and the lab's own sentence cannot disagree.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from analysis.depth import FLAT_RATIO, TREND_RHO, depth_profile
from teaching.answers.core import Answer, NeedsRun, StepInputs, answer, interval_scores
from analysis.training import layer_grad_profile


@dataclass(frozen=True)
class RunView:
    """What lesson 5 reads of a finished training run: the session's TrainJob has these attributes, and
    :func:`reference_run` builds one outside the app. ``result`` is an :class:`engine.train.TrainResult`;
    ``model`` the trained clone, ``init`` the untouched one."""

    result: Any
    model: Any
    init: Any
    corpus: str
    id: str


@dataclass(frozen=True)
class RaceView:
    """What lesson 5 reads of a finished race (the session's RaceJob has these attributes): ``result`` is an
    :class:`engine.train.RaceResult`, ``config`` the raced model's config, ``cfg`` its TrainConfig."""

    result: Any
    config: Any
    cfg: Any
    id: str


def lab_train_config(s: StepInputs):
    """The TrainConfig the Training lab builds from its controls at the step's settings (defaults: 300 steps,
    lr 3e-3, warmup 30, batch 16, seq 64; validation every tenth of the run; seed 0)."""
    from engine.train import TrainConfig

    d = TrainConfig()
    steps = int(s.setting("train.steps", d.steps))
    return TrainConfig(steps=steps, learning_rate=float(s.setting("train.lr", d.learning_rate)),
                       warmup_steps=min(int(s.setting("train.warmup", d.warmup_steps)), steps - 1),
                       batch_size=int(s.setting("train.batch", d.batch_size)),
                       seq_len=int(s.setting("train.seq_len", d.seq_len)), eval_every=max(1, steps // 10), seed=d.seed)


def lab_race_config(s: StepInputs):
    """The raced model's config and the race's TrainConfig at the step's settings, as the race panel builds them
    (depth 12, 100 steps, lr 3e-3, warmup a tenth of the steps, batch 8, seq 32, seed = the sidebar seed)."""
    from engine.train import TrainConfig

    steps = int(s.setting("train.race_steps", 100))
    warm = bool(s.setting("train.race_warmup", True))
    limit = min(256, s.config.max_position_embeddings) if s.config.has_position_limit else 256
    cfg = TrainConfig(steps=steps, learning_rate=float(s.setting("train.race_lr", 3e-3)),
                      warmup_steps=max(1, steps // 10) if warm else 0, batch_size=8, seq_len=min(32, limit),
                      eval_every=max(1, steps // 5), eval_batches=4, seed=int(s.setting("cfg.seed", 0)))
    return s.config.replace(num_hidden_layers=int(s.setting("train.race_depth", 12))), cfg


def corpus_stream(s: StepInputs, corpus: str) -> list[int]:
    """The bundled corpus as the step's tokenizer encodes it (what the Training lab trains on)."""
    from engine.tokenizer import load_corpus

    return s.tokenizer.encode(load_corpus(corpus))


_REFERENCE: dict[tuple, Any] = {}  # reference runs and races, by what determines them (a process's few settings)


def _reference(kind: str, config, cfg, corpus: str, s: StepInputs):
    key = (kind, repr(config), repr(cfg), corpus, s.tokenizer.name, s.tokenizer.vocab_size)
    if key not in _REFERENCE:
        from engine import CausalLM
        from engine.seeding import seeded
        from engine.train import clone_model, race_pre_post, train

        ids = corpus_stream(s, corpus)
        if kind == "race":
            _REFERENCE[key] = RaceView(result=race_pre_post(config, ids, cfg), config=config, cfg=cfg,
                                       id=f"reference-race-{len(_REFERENCE)}")
        else:
            with seeded(int(s.setting("cfg.seed", 0))):
                model = CausalLM(config)
            init = clone_model(model).eval()
            _REFERENCE[key] = RunView(result=train(model, ids, cfg), model=model, init=init, corpus=corpus,
                                      id=f"reference-run-{len(_REFERENCE)}")
    return _REFERENCE[key]


def reference_run(s: StepInputs) -> RunView:
    """A deterministic run at the step's settings (the sidebar model's seeded weights, the lab's TrainConfig),
    computed once per process: the stand-in for the page's run where there is none (``python -m teaching.lessons check``,
    tests)."""
    return _reference("train", s.config, lab_train_config(s), str(s.setting("train.corpus", "zh")), s)


def reference_race(s: StepInputs) -> RaceView:
    """A deterministic race at the step's settings, computed once per process (see :func:`reference_run`)."""
    config, cfg = lab_race_config(s)
    return _reference("race", config, cfg, str(s.setting("train.corpus", "zh")), s)


def the_run(s: StepInputs, options: list, option_labels: dict | None = None) -> RunView:
    """The session's finished training run (``"train.job"``), or the reference run outside the app. In the app
    with no finished run yet: :class:`NeedsRun` carrying the question's ``options`` (the learner picks, then
    presses Start)."""
    if "train.job" not in s.session:
        return reference_run(s)
    if s.session["train.job"] is None:
        raise NeedsRun("train", options, option_labels)
    return s.session["train.job"]


def the_race(s: StepInputs, options: list, option_labels: dict | None = None) -> RaceView:
    """The session's finished race (``"race.job"``), else as :func:`the_run`."""
    if "race.job" not in s.session:
        return reference_race(s)
    if s.session["race.job"] is None:
        raise NeedsRun("race", options, option_labels)
    return s.session["race.job"]


def choice(table: dict, which: str, **fields) -> Answer:
    """The option ``table[which]`` as the right one, every other option of ``table`` as a distractor."""
    return Answer(correct=table[which], distractors=[v for k, v in table.items() if k != which], **fields)


def _run_values(run: RunView) -> dict:
    r = run.result
    V = run.model.config.vocab_size
    return {"steps": r.steps_done, "initial": round(r.initial_val_loss, 2), "final": round(r.final_val_loss, 2),
            "lnv": round(math.log(V), 2), "V": V}


def initial_loss_options(V: int) -> dict:
    """What an untrained model's loss could be, by formula: 0 (a perfect model), ln V / 2, ln V (a uniform guess
    over V tokens, in nats) and log2 V (the same in bits)."""
    return {"zero": 0.0, "half": round(math.log(V) / 2, 2), "uniform": round(math.log(V), 2),
            "bits": round(math.log2(V), 2)}


@answer("run_initial_loss")
def run_initial_loss(s: StepInputs) -> Answer:
    """The validation loss of the untrained model (step 0 of the run) against the formulas of
    :func:`initial_loss_options`: the right option is the one nearest the run's measured loss (ln V for a model
    initialised with small weights)."""
    opts = initial_loss_options(s.config.vocab_size)
    run = the_run(s, list(opts.values()))
    nearest = min(opts, key=lambda k: abs(opts[k] - run.result.initial_val_loss))
    return choice(opts, nearest, values=_run_values(run), highlight={"x": 0})


LOSS_BANDS = {
    "same": {"en": "about where it started (less than 10 % lower)", "zh": "和开始时差不多（降幅不到 10%）"},
    "lower": {"en": "clearly lower, but above half of where it started", "zh": "明显更低，但仍高于起点的一半"},
    "half": {"en": "below half of where it started", "zh": "不到起点的一半"},
}


@answer("run_final_loss")
def run_final_loss(s: StepInputs) -> Answer:
    """Where the validation loss ends against where it started: final / initial ≥ 0.9, between 0.5 and 0.9,
    or below 0.5."""
    from analysis.training import training_history

    run = the_run(s, list(LOSS_BANDS.values()))
    v = _run_values(run)
    r = run.result
    ratio = r.final_val_loss / r.initial_val_loss
    band = "same" if ratio >= 0.9 else "lower" if ratio >= 0.5 else "half"
    val = training_history(r.history, r.initial_val_loss).dropna(subset=["val_loss"])
    early = val.iloc[1] if len(val) > 1 else val.iloc[-1]  # the first validation after step 0
    drop = r.initial_val_loss - r.final_val_loss
    share = (r.initial_val_loss - early["val_loss"]) / drop if drop > 0 else math.nan
    return choice(LOSS_BANDS, band, values={**v, "drop": _pct(1 - ratio), "early_step": int(early["step"]),
                                            "early": round(float(early["val_loss"]), 2), "early_share": _pct(share)},
                  highlight={"x": v["steps"]})


RISE_BANDS = {
    "none": {"en": "never: it falls at every step", "zh": "从不：每一步都下降"},
    "few": {"en": "at a few steps (under 10 %)", "zh": "少数几步（不到 10%）"},
    "some": {"en": "at 10–30 % of the steps", "zh": "10%–30% 的步"},
    "many": {"en": "at more than 30 % of the steps", "zh": "超过 30% 的步"},
}


@answer("run_loss_rises")
def run_loss_rises(s: StepInputs) -> Answer:
    """At how many steps the training loss (of that step's batch) is higher than at the step before
    (:func:`analysis.training.training_history`), as a share of the steps: none, under 10 %, 10–30 %, over 30 %."""
    from analysis.training import training_history

    run = the_run(s, list(RISE_BANDS.values()))
    loss = training_history(run.result.history)["loss"].to_numpy()
    rises = int((np.diff(loss) > 0).sum())
    share = rises / max(1, len(loss) - 1)
    band = "none" if rises == 0 else "few" if share < 0.1 else "some" if share <= 0.3 else "many"
    return choice(RISE_BANDS, band, values={**_run_values(run), "rises": rises, "share": _pct(share)})


def poem_numbers(s: StepInputs, run: RunView) -> dict:
    """:func:`analysis.probes.measure_poem_structure` of the run (trained vs untrained, with the run's window
    length), and the share of "，" and "。" among the poem tokens (what a frequency-only guess would give), as
    the lab measures them."""
    from analysis.probes import measure_poem_structure

    tok = s.tokenizer
    stream = np.asarray(corpus_stream(s, "zh"))
    comma, period = tok.encode("，")[0], tok.encode("。")[0]
    ps = measure_poem_structure(run.model, tok, init_model=run.init, context_len=run.result.config.seq_len)
    return {**ps.to_dict(), "freq_comma": float(np.mean(stream == comma)), "freq_period": float(np.mean(stream == period))}


POEM_VERDICTS = {
    "not_yet": {"en": "about as unlikely as any other token (it has not learned them yet)",
                "zh": "和其他词元差不多不可能（还没学会）"},
    "frequency": {"en": "about as likely as their share of the text (it knows how common they are, not where)",
                  "zh": "大约等于它们在文本中的占比（只知道常见，不知道位置）"},
    "learned": {"en": "far more likely than their share of the text (it knows where in the line they go)",
                "zh": "远高于它们在文本中的占比（知道它们在一行中的位置）"},
}


def _pct(x: float, digits: int = 1) -> str:
    """A share as a percentage with a fixed number of decimals ("12.0", not "12" next to "59.4")."""
    return f"{100 * x:.{digits}f}"


@answer("poem_punctuation")
def poem_punctuation(s: StepInputs) -> Answer:
    """What the run learned about poem lines: p("，") after a line's 5th character and p("。") after its 10th,
    against their share of the text, by :func:`analysis.probes.punctuation_verdict` (the lab's sentence)."""
    from analysis.probes import punctuation_verdict

    run = the_run(s, list(POEM_VERDICTS.values()))
    p = poem_numbers(s, run)
    verdict = punctuation_verdict(p["comma_prob"], p["period_prob"], p["freq_comma"], p["freq_period"],
                                  p["init_comma_prob"], p["init_period_prob"], p["uniform_prob"])
    return choice(POEM_VERDICTS, verdict, values={
        "comma": _pct(p["comma_prob"]), "period": _pct(p["period_prob"]), "fc": _pct(p["freq_comma"]),
        "fp": _pct(p["freq_period"]), "comma0": _pct(p["init_comma_prob"], 3), "uniform": _pct(p["uniform_prob"], 3),
        "n": p["n_lines"]})


YES_NO = {"yes": {"en": "yes", "zh": "是"}, "no": {"en": "no", "zh": "否"}}


@answer("poem_slot_head")
def poem_slot_head(s: StepInputs) -> Answer:
    """Does a head of the trained model look at "the same slot of the previous line" (13 tokens back) clearly more
    than chance: :func:`analysis.probes.slot_head` on the lab's poem window (:func:`analysis.probes.poem_slot_pairs`).
    Highlight: that head on the lab's slot map (x = head, y = layer, 1-based)."""
    from analysis.probes import head_slot_attention, poem_slot_pairs, slot_head

    run = the_run(s, list(YES_NO.values()))
    mc = run.model.config
    window, pairs = poem_slot_pairs(s.tokenizer, n_tokens=min(64, mc.max_position_embeddings)
                                    if mc.has_position_limit else 64)
    best = slot_head(head_slot_attention(run.model, window, pairs), head_slot_attention(run.init, window, pairs), pairs)
    return choice(YES_NO, "yes" if best["stands_out"] else "no",
                  values={"layer": best["layer"] + 1, "head": best["head"] + 1, "score": _pct(best["score"]),
                          "uniform": _pct(best["uniform"]), "init": _pct(best["init_best"]), "L": mc.num_hidden_layers,
                          "steps": run.result.steps_done},
                  highlight={"x": best["head"] + 1, "y": best["layer"] + 1})


RACE_WINNERS = {
    "pre": {"en": "Pre-Norm", "zh": "Pre-Norm"},
    "post": {"en": "Post-Norm", "zh": "Post-Norm"},
    "tie": {"en": "neither: within 0.02 nats of each other", "zh": "不相上下：相差不到 0.02 nats"},
}


@answer("race_winner")
def race_winner(s: StepInputs) -> Answer:
    """Which placement ends the race with the lower validation loss (a tie within 0.02 nats)."""
    race = the_race(s, list(RACE_WINNERS.values()))
    r = race.result
    pre, post = r.pre.final_val_loss, r.post.final_val_loss
    win = "tie" if abs(pre - post) < 0.02 else "pre" if pre < post else "post"
    return choice(RACE_WINNERS, win, values={
        "pre": round(pre, 2), "post": round(post, 2), "pre0": round(r.pre.initial_val_loss, 2),
        "post0": round(r.post.initial_val_loss, 2), "L": race.config.num_hidden_layers, "steps": r.post.steps_done,
        "gap": round(abs(pre - post), 2)})


TRENDS = {
    "grows": {"en": "grows towards the output", "zh": "越靠近输出越大"},
    "shrinks": {"en": "shrinks towards the output", "zh": "越靠近输出越小"},
    "flat": {"en": "roughly flat (within 25 %)", "zh": "大致持平（相差不到 25%）"},
    "mixed": {"en": "no steady trend (up and down)", "zh": "没有一致的趋势（时高时低）"},
}


@answer("race_profile")
def race_profile(s: StepInputs, placement: str = "post") -> Answer:
    """How one placement's gradient norm (mean over the race's steps) runs over blocks 2 .. L
    (:func:`analysis.training.layer_grad_profile`; :func:`analysis.depth.depth_profile`'s ``rest_kind``, the
    rule of the race's own sentence)."""
    race = the_race(s, list(TRENDS.values()))
    values = layer_grad_profile(race.result.results()[placement].history).sort_values("layer")["mean_grad_norm"]
    p = depth_profile(values.tolist())
    if p.get("rest_kind") not in TRENDS:
        raise ValueError(f"no trend over blocks 2..L for {len(values)} blocks (needs 3 or more finite, positive norms)")
    ans = choice(TRENDS, p["rest_kind"], values={
        "first": float(f"{p['first']:.3g}"), "second": float(f"{p['second']:.3g}"), "last": float(f"{p['last']:.3g}"),
        "ratio": round(p["rest_ratio"], 2), "spread": round(p["rest_spread"], 2), "L": p["L"],
        "rho": f"{p['rest_rho']:+.2f}"})
    return replace(ans, scores=trend_scores(p["rest_rho"], p["rest_spread"], [ans.correct, *ans.distractors]))


def trend_scores(rho: float, spread: float, opts: list) -> list[float]:
    """The scores of the trend options (:func:`analysis.depth.trend_kind`'s rule): how far inside (0) or outside
    (negative) each option's region the profile lies. Not flat: "flat" scores ``-log(spread / FLAT_RATIO)``, the
    others the rank correlation's distance to their interval (rises ``[TREND_RHO, 1]``, falls ``[-1, -TREND_RHO]``,
    no steady trend in between). Flat: "flat" scores 0, every other option ``-log(FLAT_RATIO / spread)``."""
    if spread <= FLAT_RATIO:
        return [0.0 if o == TRENDS["flat"] else -math.log(FLAT_RATIO / spread) for o in opts]
    regions = {"grows": (TREND_RHO, 1.0), "shrinks": (-1.0, -TREND_RHO), "mixed": (-TREND_RHO, TREND_RHO)}
    names = {json.dumps(v, sort_keys=True): k for k, v in TRENDS.items()}
    out = []
    for o in opts:
        name = names[json.dumps(o, sort_keys=True)]
        out.append(-math.log(spread / FLAT_RATIO) if name == "flat" else interval_scores(rho, [regions[name]])[0])
    return out
