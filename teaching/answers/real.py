"""Answer keys of lesson 4, "Inside a real model" (SmolLM2-135M).

Each function is registered with :func:`teaching.answers.core.answer` and is thin: it calls the analysis functions the
pages draw (``heads``, ``massive``, ``lens``, and ``engine.kv_cache`` for the Generate page's calculator), so a key and the chart it
is about cannot disagree. Distractors come from a plausible wrong reading (the head that is strongest at another
role, the position mistaken for the dimension, the cache size with every query head stored, ...).

Layers and heads are 1-based in the options and highlights (as every page shows them); residual dimensions and
positions are 0-based (as the Head roles page's table shows them); depth 0 = the embedding, d = after block d.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch

from analysis import heads, lens, massive
from teaching.answers.core import Answer, StepInputs, answer
from analysis.trace import residual_stream
from analysis.tokenizers import special_ids
from engine.kv_cache import kv_cache_bytes

INDUCTION_PERIOD = 50  # the Head roles page's repeat: 50 random tokens (seed 0), then the same 50 again

ROLE_NAMES = {
    "prev_token": {"en": "previous-token", "zh": "前一词元"},
    "induction": {"en": "induction", "zh": "归纳"},
    "first_token": {"en": "first-token", "zh": "首词元"},
}


def head_option(layer: int, head: int) -> dict:
    """A (layer, head) option, 0-based in, 1-based on screen: ``{"en": "layer 17, head 1", "zh": ...}``."""
    return {"en": f"layer {layer + 1}, head {head + 1}", "zh": f"第 {layer + 1} 层第 {head + 1} 个头"}


def pick_distinct(correct: Any, candidates: Sequence[Any], n: int, key=lambda v: v) -> list:
    """The first ``n`` candidates whose ``key`` differs from the correct one's and from each other's."""
    seen, out = {key(correct)}, []
    for c in candidates:
        k = key(c)
        if k not in seen:
            seen.add(k)
            out.append(c)
        if len(out) == n:
            break
    return out


# ---- lesson 4: inside SmolLM2 ----------------------------------------------------------------------------------
def induction_period(config) -> int:
    """The repeat length the Head roles page uses: 50, or half the position limit when that is shorter."""
    limit = config.max_position_embeddings if config.has_position_limit else 2 * INDUCTION_PERIOD
    return max(1, min(INDUCTION_PERIOD, limit // 2))


@torch.no_grad()
def repeat_attentions(s: StepInputs) -> tuple[torch.Tensor, ...]:
    """Attention patterns on the page's repeated random tokens (:func:`analysis.heads.repeated_random_tokens`,
    seed 0, special tokens excluded), one ``[1, nh, 2n, 2n]`` per layer."""
    exclude = tuple(sorted(special_ids(s.tokenizer))) if s.tokenizer is not None else ()
    ids = heads.repeated_random_tokens(s.config.vocab_size, induction_period(s.config), seed=0, exclude=exclude)
    return s.model(ids, output_attentions=True).attentions


@answer("total_heads")
def total_heads(s: StepInputs) -> Answer:
    """Attention heads in the whole model, layers × heads per layer; distractors: one layer's heads, the layer
    count, and the KV heads (layers × n_kv, the heads that store keys and values)."""
    c = s.config
    L, nh, nkv = c.num_hidden_layers, c.num_attention_heads, c.kv_heads
    return Answer(correct=L * nh, distractors=pick_distinct(L * nh, [L * nkv, nh, L, nh * nkv], 3),
                  values={"L": L, "nh": nh, "kv": nkv, "total": L * nh, "kv_total": L * nkv,
                          "group": nh // nkv if nkv else 0})


@answer("first_token_share")
def first_token_share(s: StepInputs) -> Answer:
    """Mean share of attention on the first token over every head and every query after it, in percent
    (:func:`analysis.heads.first_token_shares`). Distractors: no preference (uniform causal attention,
    :func:`analysis.heads.uniform_reference`), one key in T (1/T), and the strongest single head (max, not mean).
    Highlight: the strongest head's cell on the sink map (x = head, y = layer, 1-based)."""
    shares = heads.first_token_shares(s.trace().attentions)  # (L, nh)
    T = int(s.input_ids.shape[1])
    mean = float(np.mean(shares))
    uniform = heads.uniform_reference(T)
    li, hi = np.unravel_index(int(np.argmax(shares)), shares.shape)
    pct = lambda v: round(100 * v, 1)  # noqa: E731
    wrong = [pct(uniform), pct(1 / T), pct(float(shares.max())), pct(min(1.0, 1.5 * mean)), pct(mean / 3)]
    close = lambda v: round(v / max(pct(mean), 1e-9), 1)  # noqa: E731  options within ~10 % read as one
    return Answer(correct=pct(mean), distractors=pick_distinct(pct(mean), wrong, 3, key=close),
                  values={"mean": pct(mean), "uniform": pct(uniform), "T": T, "over": int((shares > 0.5).sum()),
                          "cells": int(shares.size), "layer": int(li) + 1, "head": int(hi) + 1,
                          "max": pct(float(shares.max()))},
                  highlight={"x": int(hi) + 1, "y": int(li) + 1},
                  option_labels={"en": "{} %", "zh": "{}%"})


@answer("strongest_head")
def strongest_head(s: StepInputs, score: str = "prev_token") -> Answer:
    """The head with the highest ``score`` ("prev_token" on the step's text, "induction" on the repeat), as the
    Head roles page ranks them (:func:`analysis.heads.top_heads`). Distractors, all scoring under half the best
    (a runner-up close to the best would be a second right answer): the strongest heads at the other roles (a
    previous-token head is not an induction head), the strongest other head of the same layer, the weakest."""
    if score not in ROLE_NAMES:
        raise ValueError(f"unknown score {score!r}; valid: {', '.join(ROLE_NAMES)}")
    repeat, period = repeat_attentions(s), induction_period(s.config)
    roles = heads.head_roles(s.trace().attentions, repeat, period, s.input_ids[0].tolist())
    ranked = heads.top_heads(roles, score, len(roles))
    best = ranked.iloc[0]
    correct = (int(best["layer"]), int(best["head"]))
    weak = roles[roles[score] < 0.5 * float(best[score])]  # clearly not this role: a fair distractor
    others = [heads.top_heads(weak, other, 1) for other in ROLE_NAMES if other != score]
    same_layer = weak[weak["layer"] == correct[0]].sort_values(score, ascending=False).head(1)
    lowest = weak.sort_values([score, "layer", "head"]).head(3)
    cands = [(int(r.layer), int(r.head)) for df in [*others, same_layer, lowest] for r in df.itertuples()]
    wrong = pick_distinct(correct, cands, 3)
    second = ranked.iloc[1]
    prev = heads.top_heads(heads.head_roles(repeat, repeat, period), "prev_token", 1).iloc[0] if score == "induction" \
        else best  # the previous-token head of the induction circuit: measured on the same repeat
    by_head = {(int(r.layer), int(r.head)): float(getattr(r, score)) for r in roles.itertuples()}
    offered = {correct, *wrong}
    return Answer(correct=head_option(*correct), distractors=[head_option(*w) for w in wrong],
                  scores=[by_head[correct], *(by_head[w] for w in wrong)],
                  runner_up=max((v for k, v in by_head.items() if k not in offered), default=None),
                  values={"layer": correct[0] + 1, "head": correct[1] + 1, "score": f"{float(best[score]):.4f}",
                          "second": f"{float(second[score]):.4f}", "second_layer": int(second["layer"]) + 1,
                          "second_head": int(second["head"]) + 1, "period": period,
                          "prev_layer": int(prev["layer"]) + 1, "prev_head": int(prev["head"]) + 1,
                          "uniform": round(uniform_score(s, score), 3)},
                  highlight={"x": correct[1] + 1, "y": correct[0] + 1})


@answer("strongest_head_score")
def strongest_head_score(s: StepInputs, score: str = "prev_token") -> Answer:
    """A number: the best head's ``score`` (:func:`strongest_head`'s key, whose values the explanation quotes), to 2
    decimals. Wrong models: even attention (the page's reference line) and a perfect head (1)."""
    key = strongest_head(s, score)
    best = round(float(key.values["score"]), 2)
    return Answer(correct=best, values=key.values, highlight=key.highlight,
                  wrong={"even attention": float(key.values["uniform"]), "a perfect head": 1.0})


def uniform_score(s: StepInputs, score: str) -> float:
    """What a head with uniform causal attention would score (the page's reference line)."""
    if score == "induction":
        n = induction_period(s.config)
        return heads.uniform_reference(2 * n, n, 2 * n - 1)
    return heads.uniform_reference(int(s.input_ids.shape[1]))


def massive_table(s: StepInputs):
    return massive.massive_activations(residual_stream(s.trace()))


def _peak(ma) -> Any:
    """The depth row with the largest |h| (the page's peak)."""
    return ma.loc[ma["max_abs"].idxmax()]


@answer("massive_dimension")
def massive_dimension(s: StepInputs) -> Answer:
    """The residual dimension that holds the largest activation (:func:`analysis.massive.massive_summary`'s most
    frequent place, else the overall peak). Distractors: its position read as a dimension, the dimensions of the
    largest |h| at the embedding and after the last block, and the runner-up dimension at the peak depth."""
    ma = massive_table(s)
    summary = massive.massive_summary(ma)
    peak = _peak(ma)
    dim = summary["places"][0][1] if summary else int(peak["dim"])
    pos = summary["places"][0][0] if summary else int(peak["position"])
    h = residual_stream(s.trace())[int(peak["depth"])][0].detach().abs().amax(0)  # (H,) max |h| per dimension
    h[dim] = -1.0
    runner_up = int(h.argmax())
    H = s.config.hidden_size
    wrong = pick_distinct(dim, [pos, int(ma["dim"].iloc[0]), int(ma["dim"].iloc[-1]), runner_up, H - 1, H // 2], 3)
    return Answer(correct=int(dim), distractors=wrong,
                  values={"dim": int(dim), "position": int(pos), "token": s.tokens[pos], "H": H,
                          "peak": round(float(peak["max_abs"])), "peak_depth": int(peak["depth"]),
                          "first": summary["first"] if summary else -1, "last": summary["last"] if summary else -1},
                  highlight={"x": int(peak["depth"])},
                  option_labels={"en": "dimension {}", "zh": "第 {} 维"})


@answer("massive_ratio")
def massive_ratio(s: StepInputs) -> Answer:
    """How many times the median |h| the peak activation is, as an order of magnitude (10 ** round(log10 ratio))
    at the peak depth; distractors: the neighbouring powers of ten."""
    peak = _peak(massive_table(s))
    ratio = float(peak["ratio"])
    k = max(0, round(math.log10(ratio))) if ratio > 0 and math.isfinite(ratio) else 0
    near = sorted({j for j in (k - 2, k - 1, k + 1, k + 2) if j >= 0}, key=lambda j: (abs(j - k), j))
    return Answer(correct=10 ** k, distractors=[10 ** j for j in near[:3]],
                  values={"ratio": round(ratio), "peak": round(float(peak["max_abs"])),
                          "median": round(float(peak["median_abs"]), 2), "depth": int(peak["depth"]),
                          "dim": int(peak["dim"]), "position": int(peak["position"])},
                  highlight={"x": int(peak["depth"])},
                  option_labels={"en": "about {}×", "zh": "约 {} 倍"})


@answer("lens_depth")
def lens_depth(s: StepInputs) -> Answer:
    """At the last position: the first depth from which the model's final prediction stays the logit lens's top
    token (:func:`analysis.lens.first_top_depth`, the depth the Logit lens page names). Distractors: the depth at
    which it first enters the lens's top 10 (a weaker reading), the middle of the model, and block 1."""
    table = lens.logit_lens(s.model, residual_stream(s.trace()))
    T, L = int(s.input_ids.shape[1]), s.config.num_hidden_layers
    depth = int(lens.first_top_depth(table).set_index("position").loc[T - 1, "depth"])
    last = table[table["position"] == T - 1].sort_values("depth")
    top10 = last[last["rank_final"] < 10]["depth"]
    final_id = int(last["final_id"].iloc[-1])
    wrong = pick_distinct(depth, [int(top10.min()) if len(top10) else L // 2, L // 2, 1, L // 4, 3 * L // 4], 3)
    return Answer(correct=depth, distractors=wrong,
                  values={"depth": depth, "L": L, "final": s.tokenizer.pieces_after(s.input_ids[0].tolist(), [final_id])[0].label
                          if s.tokenizer is not None else f"#{final_id}", "p": round(float(last["p_final"].iloc[-1]), 3),
                          "rank_mid": int(last["rank_final"].iloc[L // 2])},
                  highlight={"y": depth},
                  option_labels={"en": "after block {}", "zh": "第 {} 层之后"})


def dtype_bytes(name: str) -> int:
    """Bytes per number of a dtype named as on the Generate page ("float32", "bfloat16", "int8")."""
    dt = getattr(torch, name)
    return (torch.finfo(dt).bits if dt.is_floating_point else torch.iinfo(dt).bits) // 8


@answer("kv_cache_mib")
def kv_cache_mib(s: StepInputs) -> Answer:
    """KV-cache size in MiB at the Generate page's context length and dtype (``gen.ctx``, ``gen.dtype``):
    ``2 · L · n_kv · head_dim · T · bytes`` (:func:`engine.kv_cache.kv_cache_bytes`). Distractors from the wrong
    formulas: keys only (no factor 2), every query head stored (MHA's n_heads instead of n_kv), and float32."""
    c = s.config
    T, dtype = int(s.setting("gen.ctx", 2048)), str(s.setting("gen.dtype", "bfloat16"))
    b = dtype_bytes(dtype)
    mib = lambda n_kv, k=1, nbytes=b: kv_cache_bytes(c.num_hidden_layers, n_kv, c.head_dim, T, nbytes) * k / 2**20  # noqa: E731
    correct = mib(c.kv_heads)
    wrong = pick_distinct(correct, [mib(c.kv_heads, 0.5), mib(c.num_attention_heads), mib(c.kv_heads, 1, 4),
                                    mib(c.kv_heads, 2)], 3, key=lambda v: f"{v:.3g}")
    return Answer(correct=correct, distractors=wrong,
                  values={"L": c.num_hidden_layers, "kv": c.kv_heads, "nh": c.num_attention_heads, "hd": c.head_dim,
                          "T": T, "b": b, "dtype": dtype, "bytes": kv_cache_bytes(c.num_hidden_layers, c.kv_heads,
                                                                                  c.head_dim, T, b),
                          "mha": mib(c.num_attention_heads), "x": c.num_attention_heads // max(c.kv_heads, 1)},
                  option_labels={"en": "{} MiB", "zh": "{} MiB"})
