"""Answer keys of lesson 6, "Interventions: what a head is for" (SmolLM2-135M on the Interventions page).

Thin: each key comes from :mod:`analysis.interventions` (the functions the page's sweeps use: the induction
sequence, ``induction_loss``, ``check_pair``, the metrics), computed only at the runs the question needs (two
heads ablated, one layer's positions patched), so ``python -m teaching.lessons check`` stays a few seconds. Layers and
heads are 1-based in the options (as the page shows them), positions 0-based.
"""

from __future__ import annotations

import math

import torch

from analysis import interventions as iv
from analysis.heads import induction_scores, previous_token_scores
from teaching.answers.core import Answer, StepInputs, answer, interval_scores
from teaching.answers.real import head_option
from engine.interventions import ActivationPatch, HeadAblation, sweep

SAME = 0.15  # two rises within 15 % of each other count as "about the same"


@torch.no_grad()
def circuit(s: StepInputs) -> dict:
    """The page's induction experiment at the two heads of the circuit: the strongest previous-token head and the
    strongest induction-score head on the repeated sequence, each removed alone and both together (0-based)."""
    period = iv.induction_period(s.config)
    ids = iv.induction_ids(s.model, s.tokenizer, period)
    att = s.model(ids, output_attentions=True).attentions
    prev, ind = previous_token_scores(att), induction_scores(att, period)  # (L, nh)
    p = tuple(int(v) for v in divmod(int(prev.argmax()), prev.shape[1]))
    i = tuple(int(v) for v in divmod(int(ind.argmax()), ind.shape[1]))
    base = iv.induction_loss(s.model, ids, period)
    lp, li = iv.induction_loss(s.model, ids, period, [p]), iv.induction_loss(s.model, ids, period, [i])
    both = iv.induction_loss(s.model, ids, period, sorted({p, i}))
    return {"prev": p, "induction": i, "base": base, "prev_rise": lp - base, "induction_rise": li - base,
            "both_rise": both - base, "both": both, "vocab": s.config.vocab_size,
            "prev_score": float(prev[p]), "induction_score": float(ind[i])}


def _values(c: dict) -> dict:
    r = lambda v: round(v, 2)  # noqa: E731
    return {"pl": c["prev"][0] + 1, "ph": c["prev"][1] + 1, "il": c["induction"][0] + 1, "ih": c["induction"][1] + 1,
            "base": r(c["base"]), "pr": r(c["prev_rise"]), "ir": r(c["induction_rise"]), "both": r(c["both_rise"]),
            "sum": r(c["prev_rise"] + c["induction_rise"]),
            "ratio": r(c["prev_rise"] / c["induction_rise"]) if c["induction_rise"] > 0 else float("nan")}


@answer("interv_circuit_winner")
def circuit_winner(s: StepInputs) -> Answer:
    """Which removal raises the loss on the second copy more: the strongest previous-token head's or the strongest
    induction-score head's (or about the same: within :data:`SAME`). Highlight: the winner's cell (x = the head's column
    index, y = its 1-based layer, as the page's map plots them)."""
    c = circuit(s)
    p, i = c["prev"], c["induction"]
    prev_opt = {k: f"{v} ({r})" for (k, v), r in zip(head_option(*p).items(), ("previous-token head", "前一 token 头"))}
    ind_opt = {k: f"{v} ({r})" for (k, v), r in zip(head_option(*i).items(), ("induction head", "归纳头"))}
    same = {"en": "about the same", "zh": "差不多"}
    hi, lo = max(c["prev_rise"], c["induction_rise"]), min(c["prev_rise"], c["induction_rise"])
    if hi <= 0 or abs(hi - lo) <= SAME * abs(hi):
        correct, wrong, win = same, [prev_opt, ind_opt], None
    elif c["prev_rise"] > c["induction_rise"]:
        correct, wrong, win = prev_opt, [ind_opt, same], p
    else:
        correct, wrong, win = ind_opt, [prev_opt, same], i
    return Answer(correct=correct, distractors=wrong, values=_values(c),
                  highlight={"x": win[1], "y": win[0] + 1} if win else {})


KEPT = (0.25, 0.75)  # the kept share of the induction score that separates "keeps it", "loses part", "loses it"


@answer("interv_induction_without_prev")
def induction_without_prev(s: StepInputs) -> Answer:
    """How much of the induction head's induction score is left when the previous-token head is removed (zero
    ablation, the page's "before / after" view): the kept share ``after / before`` falls in one of three ranges."""
    c = circuit(s)
    period = iv.induction_period(s.config)
    ids = iv.induction_ids(s.model, s.tokenizer, period)
    cut = s.model(ids, output_attentions=True, interventions=[HeadAblation(*c["prev"], "zero")]).attentions
    after = float(induction_scores(cut, period)[c["induction"]])
    kept = after / c["induction_score"]
    lo, hi = (round(100 * v) for v in KEPT)
    opts = {"keeps": {"en": f"yes: it keeps over {hi} % of its induction score",
                      "zh": f"能：它的归纳得分保留 {hi}% 以上"},
            "part": {"en": f"partly: it keeps between {lo} % and {hi} % of its induction score",
                     "zh": f"部分能：它的归纳得分保留 {lo}% 到 {hi}%"},
            "loses": {"en": f"no: it keeps under {lo} % of its induction score",
                      "zh": f"不能：它的归纳得分保留不到 {lo}%"}}
    regions = {"loses": (-math.inf, KEPT[0]), "part": KEPT, "keeps": (KEPT[1], math.inf)}
    which = next(k for k, (a, b) in regions.items() if a <= kept < b)
    order = [which, *(k for k in opts if k != which)]
    return Answer(correct=opts[which], distractors=[opts[k] for k in order[1:]],
                  values={**_values(c), "before": round(c["induction_score"], 2), "after": round(after, 2),
                          "kept": round(100 * kept)},
                  scores=interval_scores(kept, [regions[k] for k in order]))


@answer("interv_base_loss")
def base_loss(s: StepInputs) -> Answer:
    """The plain loss on the second copy (nats). Distractors: guessing uniformly over the vocabulary (ln V), and
    the loss a model that could not copy at all might have on random tokens (about ln V as well, so: ln V / 2 and
    three times the loss)."""
    c = circuit(s)
    uniform = round(math.log(c["vocab"]), 2)
    base = round(c["base"], 2)
    wrong = [v for v in (uniform, round(uniform / 2, 2), round(3 * base, 2)) if abs(v - base) > 0.2 * max(base, 1)]
    return Answer(correct=base, distractors=wrong, values={**_values(c), "uniform": uniform},
                  option_labels={"en": "{} nats", "zh": "{} nats"})


@answer("interv_pair_vs_sum")
def pair_vs_sum(s: StepInputs) -> Answer:
    """Both heads removed together against the sum of their single rises: more, about the same (within
    :data:`SAME`), or less."""
    c = circuit(s)
    total = c["prev_rise"] + c["induction_rise"]
    pct = round(100 * SAME)
    opts = {"more": {"en": f"more than the sum of the two, by over {pct} %", "zh": f"比两者之和多出 {pct}% 以上"},
            "same": {"en": f"about the sum of the two (within {pct} %)", "zh": f"约等于两者之和（相差不到 {pct}%）"},
            "less": {"en": f"less than the sum of the two, by over {pct} %", "zh": f"比两者之和少 {pct}% 以上"}}
    which = "same" if abs(c["both_rise"] - total) <= SAME * max(abs(total), 1e-9) else \
        "more" if c["both_rise"] > total else "less"
    order = [which, *(k for k in opts if k != which)]
    regions = {"less": (-math.inf, 1 - SAME), "same": (1 - SAME, 1 + SAME), "more": (1 + SAME, math.inf)}
    ratio = c["both_rise"] / total if total > 0 else math.nan
    v = _values(c)
    return Answer(correct=opts[which], distractors=[opts[k] for k in order[1:]],
                  values={**v, "extra": round(c["both_rise"] - c["prev_rise"], 2),
                          "off": f"{100 * (ratio - 1):+.1f}"},
                  scores=interval_scores(ratio, [regions[k] for k in order]))


# ---- facts: where the answer is carried --------------------------------------------------------------------------
@torch.no_grad()
def facts_patching(s: StepInputs, layer: int | None = None) -> dict:
    """The Facts pair ("The capital of France is" -> " Paris" vs "... Italy is" -> " Rome"): ``hook_resid_pre``
    patched from the clean run at every position of ``layer`` (0-based) and at the last position of every layer;
    the fractions of the logit difference restored."""
    check = iv.check_pair(s.tokenizer, iv.FACTS)
    if check.error is not None:
        raise ValueError(f"the facts prompts cannot be patched with this tokenizer: {check.error}")
    L, T = s.config.num_hidden_layers, check.clean_ids.shape[1]
    record = s.model(check.clean_ids, output_activations=True).activations
    metric = iv.logit_diff_metric(check.correct_id, check.wrong_id)
    clean = float(metric(s.model(check.clean_ids).logits)[0])
    corrupt = float(metric(s.model(check.corrupt_ids).logits)[0])

    def patch(l: int, p: int):
        name = f"blocks.{l}.hook_resid_pre"
        return [ActivationPatch(name, [p], record[name])]
    cells = [(layer or 0, p) for p in range(T)] + [(l, T - 1) for l in range(L)]
    diffs = sweep(s.model, check.corrupt_ids, [patch(l, p) for l, p in cells], metric, logit_positions=[T - 1])
    restored = iv.fraction_restored(diffs.double().numpy(), clean, corrupt)
    tokens = [s.tokenizer.decode([t]) for t in check.clean_ids[0].tolist()]
    return {"at_layer": restored[:T].tolist(), "last": restored[T:].tolist(), "tokens": tokens, "T": T, "L": L,
            "changed": [int(p) for p in (check.clean_ids[0] != check.corrupt_ids[0]).nonzero().flatten()]}


def _position_option(p: int, tokens: list[str]) -> dict:
    return {"en": f"“{tokens[p]}” (position {p})", "zh": f"“{tokens[p]}”（位置 {p}）"}


@answer("interv_facts_early_position")
def facts_early_position(s: StepInputs) -> Answer:
    """At layer 1 (the embedding's output), the position whose patch restores the most of the answer."""
    f = facts_patching(s, 0)
    row = f["at_layer"]
    best = max(range(f["T"]), key=lambda p: row[p])
    others = sorted((p for p in range(f["T"]) if p != best), key=lambda p: -row[p])
    wrong = [p for p in [f["T"] - 1, *others] if p != best][:3]
    return Answer(correct=_position_option(best, f["tokens"]),
                  distractors=[_position_option(p, f["tokens"]) for p in dict.fromkeys(wrong)],
                  values={"restored": round(row[best], 2), "last": round(row[f["T"] - 1], 2), "pos": best},
                  highlight={"x": best, "y": 1})


@answer("interv_facts_last_from")
def facts_last_from(s: StepInputs) -> Answer:
    """The first layer (1-based) from which patching the last position restores at least half of the answer
    (:data:`analysis.interventions.RESTORED`); distractors: the first layer, the last, and 8 layers earlier."""
    f = facts_patching(s)
    L = f["L"]
    hits = [l for l, r in enumerate(f["last"]) if r >= iv.RESTORED]
    first = hits[0] + 1 if hits else L
    wrong = [v for v in dict.fromkeys([1, L, max(1, first - 8), min(L, first + 4)]) if v != first][:3]
    return Answer(correct=first, distractors=wrong,
                  values={"layer": first, "restored": round(f["last"][first - 1], 2),
                          "before": round(f["last"][max(first - 2, 0)], 2)},
                  highlight={"x": f["T"] - 1, "y": first}, option_labels={"en": "layer {}", "zh": "第 {} 层"})
