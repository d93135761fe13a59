"""The answer functions of attention, the next token and the forward's cost on the small models (lessons 1 to 3):
the causal mask, the score scale, where a row's weight goes, the top next token, temperature and how the cost grows.

Registered with :func:`teaching.answers.core.answer` when ``teaching.lessons`` is imported.
"""

from __future__ import annotations

import math

import torch

from teaching.answers.core import Answer, StepInputs, answer, bi, interval_scores, others


# ---- attention ---------------------------------------------------------------------------------------------
@answer("mask_fraction")
def mask_fraction(s: StepInputs) -> Answer:
    """The share of the T × T score matrix the causal mask removes, counted in the recorded masked scores
    (-inf above the diagonal): T(T-1)/2 of T²; distractors: one half, (T+1)/2T (the kept share), 1/T."""
    scores = s.trace().activations["blocks.0.attn.hook_attn_scores"][0, 0]  # (T, T) after the mask
    T = int(scores.shape[-1])
    removed = int(torch.isinf(scores).sum())
    frac = removed / T ** 2
    r = lambda v: round(v, 3)  # noqa: E731
    return Answer(correct=r(frac), distractors=others(r(frac), [0.5, r((T + 1) / (2 * T)), r(1 / T)]),
                  values={"T": T, "removed": removed, "cells": T * T, "kept": T * T - removed,
                          "percent": bi(f"{100 * frac:.1f} %", f"{100 * frac:.1f}%")})


@answer("score_scale")
def score_scale(s: StepInputs) -> Answer:
    """What the raw scores Q Kᵀ are divided by: √head_dim, read off the recorded raw and scaled scores;
    distractors: head_dim, √hidden, hidden."""
    acts = s.trace().activations
    layer = int(s.setting("attn.layer", 1)) - 1
    raw = acts[f"blocks.{layer}.attn.hook_attn_scores_raw"][0, 0]
    masked = acts[f"blocks.{layer}.attn.hook_attn_scores"][0, 0]
    keep = torch.isfinite(masked) & (masked != 0)
    ratio = float((raw[keep] / masked[keep]).median())
    c = s.config
    got = round(ratio, 3)
    return Answer(correct=got, distractors=others(got, [float(c.head_dim), round(math.sqrt(c.hidden_size), 3),
                                                        float(c.hidden_size), 1.0]),
                  values={"d": c.head_dim, "scale": got, "H": c.hidden_size, "heads": c.num_attention_heads})


@answer("first_row_weight")
def first_row_weight(s: StepInputs) -> Answer:
    """The weight the first position puts on itself after the softmax (its only visible key: exactly 1)."""
    layer, head = int(s.setting("attn.layer", 1)) - 1, int(s.setting("attn.head", 1)) - 1
    p = s.trace().attentions[layer][0, head]
    T = int(p.shape[-1])
    w = round(float(p[0, 0]), 3)
    return Answer(correct=w, distractors=others(w, [round(1 / T, 3), 0.5, 0.0]),
                  values={"w": w, "T": T, "row_sum": float(p[-1].sum())}, highlight={"x": 0, "y": 0})


@answer("top_key_last_row")
def top_key_last_row(s: StepInputs) -> Answer:
    """The token the last position attends to most in head ``attn.head`` of layer ``attn.layer``; options are
    token positions with their tokens."""
    layer, head = int(s.setting("attn.layer", 1)) - 1, int(s.setting("attn.head", 1)) - 1
    row = s.trace().attentions[layer][0, head, -1]  # (T,)
    order = torch.argsort(row, descending=True).tolist()
    label = lambda k: f"{k}: {s.tokens[k]}"  # noqa: E731 -- a position, so repeated tokens stay distinct
    top = order[0]
    T = len(s.tokens)
    return Answer(correct=label(top), distractors=[label(k) for k in order[1:4]],
                  values={"top": label(top), "w": float(row[top]), "uniform": 1 / T, "T": T, "last": label(T - 1)},
                  highlight={"x": top, "y": T - 1})


SPREADS = {  # how the largest weight of a row compares with an even share 1/T
    "even": (bi("almost evenly: no weight is 10 % above 1/T", "几乎平均：没有哪个权重比 1/T 高出 10%"), (0.0, 1.1)),
    "favourite": (bi("one clear favourite: 2 to 5 times 1/T", "有一个明显的偏好：1/T 的 2 到 5 倍"), (2.0, 5.0)),
    "half": (bi("one position takes more than half", "一个位置拿走一半以上"), (None, math.inf)),
}


@answer("last_row_spread")
def last_row_spread(s: StepInputs) -> Answer:
    """How the last position spreads its attention in head ``attn.head`` of layer ``attn.layer``: almost evenly,
    one clear favourite, or more than half on one position, by the largest weight over an even share 1/T (scored
    by its distance to each option's range; between two ranges the nearer one is the key)."""
    layer, head = int(s.setting("attn.layer", 1)) - 1, int(s.setting("attn.head", 1)) - 1
    row = s.trace().attentions[layer][0, head, -1]
    T = int(row.shape[-1])
    top = int(row.argmax())
    factor = float(row.max()) * T
    ranges = {k: (lo if lo is not None else T / 2, hi) for k, (_, (lo, hi)) in SPREADS.items()}
    scores = {k: interval_scores(factor, [r])[0] for k, r in ranges.items()}
    order = sorted(SPREADS, key=lambda k: -scores[k])
    return Answer(correct=SPREADS[order[0]][0], distractors=[SPREADS[k][0] for k in order[1:]],
                  values={"w": float(row.max()), "low": float(row.min()), "T": T, "even": 1 / T,
                          "top": f"{top}: {s.tokens[top]}"},
                  highlight={"x": top, "y": T - 1}, scores=[scores[k] for k in order])


# ---- next token, cost -------------------------------------------------------------------------------------
def _next_probs(s: StepInputs, temperature: float) -> torch.Tensor:
    logits = s.trace().logits[0, -1].double()
    return torch.softmax(logits / temperature, dim=-1)


def _piece(s: StepInputs, i: int) -> str:
    if s.tokenizer is None:
        return f"#{i}"
    return s.tokenizer.token_strings([i])[0]


@answer("top_next_token")
def top_next_token(s: StepInputs, k: int = 4) -> Answer:
    """The most likely next token after the input at the Next-token page's temperature (``next.temperature``),
    :func:`analysis.next_token.next_token_table`; the distractors are the runners-up."""
    from analysis.next_token import next_token_table

    temp = float(s.setting("next.temperature", 1.0))
    table = next_token_table(s.trace().logits[0, -1], lambda ids: [_piece(s, i) for i in ids], k=k, temperature=temp)
    tokens = [f"“{tok}”" for tok in table["token"]]
    return Answer(correct=tokens[0], distractors=others(tokens[0], tokens[1:]),
                  values={"top": tokens[0], "p": float(table["probability"].iloc[0]), "temp": temp,
                          "second": tokens[1] if len(tokens) > 1 else tokens[0]},
                  highlight={"y": 0})


@answer("temperature_effect")
def temperature_effect(s: StepInputs, low: float = 0.5, high: float = 1.0) -> Answer:
    """Lowering the temperature from ``high`` to ``low``: does the top token's probability rise, fall or stay?"""
    p_low, p_high = float(_next_probs(s, low).max()), float(_next_probs(s, high).max())
    up, down, same = bi("it rises", "变大"), bi("it falls", "变小"), bi("it stays the same", "不变")
    correct = same if abs(p_low - p_high) < 1e-12 else up if p_low > p_high else down
    return Answer(correct=correct, distractors=[o for o in (up, down, same) if o != correct],
                  values={"p_low": p_low, "p_high": p_high, "low": low, "high": high})


@answer("forward_cost_ratio")
def forward_cost_ratio(s: StepInputs, short: int = 32, long: int = 64) -> Answer:
    """How many times the multiply-adds of one full forward grow when the sequence grows from ``short`` to
    ``long`` tokens (:func:`engine.generation.forward_flops`, which the Generate page uses); distractors: the
    linear and the quadratic guess."""
    from engine.generation import forward_flops

    c = s.config
    a, b = forward_flops(c, short, short, short), forward_flops(c, long, long, long)
    ratio = round(b / a, 2)
    f = long / short
    return Answer(correct=ratio, distractors=others(ratio, [round(f, 2), round(f * f, 2), round(f ** 3, 2)]),
                  values={"ratio": ratio, "short": short, "long": long, "linear": f, "square": f * f,
                          "a": a, "b": b})


COST_GROWTH = {  # the cost of twice the tokens, as a multiple of the shorter sequence's
    "linear": (bi("exactly 2× (it grows linearly)", "正好 2 倍（线性增长）"), (2.0, 2.0)),
    "bit_more": (bi("a little more than 2× (between 2× and 2.5×)", "比 2 倍多一点（2 到 2.5 倍之间）"), (2.0, 2.5)),
    "quadratic": (bi("about 4× (it grows with T²)", "大约 4 倍（按 T² 增长）"), (3.5, 4.5)),
    "cubic": (bi("about 8×", "大约 8 倍"), (7.0, 9.0)),
}


@answer("forward_cost_growth")
def forward_cost_growth(s: StepInputs, short: int = 256, long: int = 512) -> Answer:
    """Doubling the sequence (``short`` to ``long = 2 short`` tokens): how the multiply-adds of one full forward
    grow (:func:`engine.generation.forward_flops`), as ranges, so that counting the whole score matrix or only its
    causal half (the ``wrong``-model check of a careful student: both land in the same range) gives one key."""
    from engine.generation import forward_flops

    c = s.config
    ratio = forward_flops(c, long, long, long) / forward_flops(c, short, short, short)
    attn = lambda T: c.num_hidden_layers * 4 * c.num_attention_heads * T * T * c.head_dim  # noqa: E731
    half = lambda T: forward_flops(c, T, T, T) - attn(T) / 2  # noqa: E731  (only the causal half of the scores)
    ratio_half = half(long) / half(short)
    both = {k: [interval_scores(r, [rng])[0] for r in (ratio, ratio_half)] for k, (_, rng) in COST_GROWTH.items()}
    key = max(COST_GROWTH, key=lambda k: min(both[k]))  # the key holds under both counts; a rival at its best
    order = [key, *(k for k in COST_GROWTH if k != key)]
    f = long / short
    return Answer(correct=COST_GROWTH[key][0], distractors=[COST_GROWTH[k][0] for k in order[1:]],
                  values={"ratio": round(ratio, 2), "half": round(ratio_half, 2), "short": short, "long": long,
                          "linear": f, "square": f * f},
                  scores=[min(both[key]), *(max(both[k]) for k in order[1:])])
