"""The answer keys of the lessons: one registered function per kind of question (the lesson files name them).

A lesson step (``teaching/lessons/*.toml``) asks a question whose answer is computed from the model at the step's
settings: ``answer = "tying_savings"`` names a function registered here with :func:`answer`. It takes a
:class:`StepInputs` (the step's config, model, input, tokens; built by the caller: the app hands over the very
model the page shows, ``python -m teaching.lessons check`` builds the same one) and the step's ``args``, and returns an
:class:`Answer`: the correct option, distractors (each from a plausible wrong formula or a neighbouring value),
the numbers the explanation quotes, and what to highlight in the chart. The functions are thin: they call the
analysis functions the pages use, so the key and the chart cannot disagree.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping

import torch

from engine import CausalLM, ModelConfig
from engine.model import CausalLMOutput
from engine.tokenizer import TextTokenizer

Option = int | float | str | dict  # a dict is {"en": ..., "zh": ...}
REGISTRY: dict[str, Callable[..., "Answer"]] = {}


def answer(name: str) -> Callable:
    """Register an answer function under ``name`` (the ``answer =`` of a lesson step)."""

    def register(fn: Callable[..., Answer]) -> Callable[..., Answer]:
        if name in REGISTRY:
            raise ValueError(f"answer function {name!r} registered twice")
        REGISTRY[name] = fn
        return fn

    return register


@dataclass(frozen=True)
class Answer:
    """A question's key at one step's settings.

    ``correct``: the right option (kind "choice") or the number (kind "number"); ``distractors``: wrong options;
    ``values``: the numbers the explanation's ``{placeholders}`` quote; ``highlight``: ``{"x": ...}``, ``{"y": ...}``
    or both, the part of the step's chart to mark after the answer; ``option_labels``: a ``{"en", "zh"}`` template
    with one ``{}`` applied to every option (e.g. "layer {}").

    What the lesson check's quality rules read (docs/lessons.md, :mod:`lessons.quality`): ``scores``, one number per
    option in the order ``[correct, *distractors]``, what the chart measures for it, higher wins (a "smallest"
    question negates; a classification gives ``-distance`` of the measured value to each option's interval,
    :func:`interval_scores`); ``runner_up``, the best score among candidates that are not offered; ``wrong``
    (number questions), ``{name: value}`` that a wrong model of the concept would give.
    """

    correct: Option
    distractors: list = field(default_factory=list)
    values: dict = field(default_factory=dict)
    highlight: dict = field(default_factory=dict)
    option_labels: dict | None = None
    scores: list | None = None
    runner_up: float | None = None
    wrong: dict = field(default_factory=dict)


def interval_scores(measured: float, intervals: list[tuple[float, float]]) -> list[float]:
    """``-distance`` of ``measured`` to each ``(low, high)`` interval (0 inside): the scores of a classification's
    options, so the key beats a neighbour by how far the measured value is from their shared boundary."""
    return [-max(low - measured, measured - high, 0.0) for low, high in intervals]


def nearest_scores(measured: float, opts: list[float]) -> list[float]:
    """``-|option - measured|``: the scores of numeric options when the key is the one nearest the measurement."""
    return [-abs(float(o) - measured) for o in opts]


class StepInputs:
    """What an answer function reads: the step's effective settings and, built on first use, its model and input.

    ``build`` is the caller's: a function returning ``(config, model, input_ids, tokens, tokenizer)`` for the
    settings. ``session`` holds read-only things only the running app has (the Training lab's run); it is empty
    outside the app.
    """

    def __init__(self, settings: Mapping[str, Any], build: Callable[[], tuple], session: Mapping | None = None):
        self.settings = dict(settings)
        self._build = build
        self.session = dict(session or {})

    @cached_property
    def _parts(self) -> tuple:
        return self._build()

    @property
    def config(self) -> ModelConfig:
        return self._parts[0]

    @property
    def model(self) -> CausalLM:
        return self._parts[1]

    @property
    def input_ids(self) -> torch.Tensor:
        return self._parts[2]

    @property
    def tokens(self) -> list[str]:
        return self._parts[3]

    @property
    def tokenizer(self) -> TextTokenizer | None:
        return self._parts[4]

    @cached_property
    def _trace(self) -> CausalLMOutput:
        from analysis.trace import run_trace

        return run_trace(self.model, self.input_ids)

    def trace(self) -> CausalLMOutput:
        """The forward with every activation and attention pattern (what the pages' ``trace(ctx)`` shows)."""
        return self._trace

    def setting(self, key: str, default: Any) -> Any:
        return self.settings.get(key, default)


# ---- formatting (the same in the app and in ``python -m teaching.lessons check --json``) --------------------------------
def format_value(value: Any, lang: str) -> str:
    """An option or an explanation value as text: ints with thousands separators, floats to 3 significant
    digits, a ``{"en", "zh"}`` dict in ``lang``."""
    if isinstance(value, dict):
        return str(value.get(lang, value.get("en", "")))
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "—"
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.3g}"
    return str(value)


def format_option(value: Any, lang: str, labels: dict | None = None) -> str:
    text = format_value(value, lang)
    return labels[lang].replace("{}", text) if labels else text


def options(key: Answer, seed: str) -> tuple[list, int]:
    """The options in the order shown and the index of the correct one: ascending when every option is a
    number, else a fixed shuffle seeded by ``seed`` (the lesson and step), so the right one is not always first.
    Duplicates (after formatting) are kept here: the lesson check reports them."""
    opts = [key.correct, *key.distractors]
    if all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in opts):
        order = sorted(range(len(opts)), key=lambda i: (opts[i], i))
    else:
        order = list(range(len(opts)))
        random.Random(seed).shuffle(order)
    return [opts[i] for i in order], order.index(0)


def distinct(opts: list, labels: dict | None = None) -> bool:
    """Whether every option reads differently in both languages."""
    return all(len({format_option(o, lang, labels) for o in opts}) == len(opts) for lang in ("en", "zh"))


# ---- answer functions: the block's anatomy --------------------------------------------------------------------
@answer("tying_savings")
def tying_savings(s: StepInputs) -> Answer:
    """Parameters saved by tying the LM head to the embedding: V × h (the head's own matrix); distractors from
    the wrong formulas V + h, 2·V·h and h²."""
    from analysis.anatomy import tying_savings as saved_by_tying

    c = s.config
    saved = saved_by_tying(c) if c.tie_word_embeddings else c.vocab_size * c.hidden_size
    return Answer(correct=saved, distractors=[c.vocab_size + c.hidden_size, 2 * saved, c.hidden_size ** 2],
                  values={"saved": saved, "v": c.vocab_size, "h": c.hidden_size}, highlight={"x": "embed_tokens"})


class NeedsRun(Exception):
    """Raised by an answer function whose key comes from a run this session has not finished yet (the Training
    lab's lesson: predict, then start the run). ``what`` is ``"train"`` or ``"race"``; ``options`` are every
    option of the question (the key's, once the run is there: the same set, so the learner can pick before it
    exists), ``option_labels`` as in :class:`Answer`."""

    def __init__(self, what: str, options: list | tuple = (), option_labels: dict | None = None):
        super().__init__(f"needs a finished {what} run")
        self.what = what
        self.options = list(options)
        self.option_labels = option_labels


def _bi(en: str, zh: str) -> dict:
    return {"en": en, "zh": zh}


def _shape(*dims: int) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _others(correct, candidates, n: int = 3) -> list:
    """Up to ``n`` distinct candidates other than ``correct`` (in order)."""
    out = []
    for c in candidates:
        if c != correct and c not in out:
            out.append(c)
    return out[:n]


@answer("tensor_shape")
def tensor_shape(s: StepInputs, of: str = "resid") -> Answer:
    """The shape ``[T, ...]`` of one sequence's tensor ``of``: "resid" (any residual / sub-layer output: [T, H]),
    "ffn_hidden" (inside the FFN: [T, I]), "logits" ([T, V]) or "head" (one head's Q/K/V: [T, head_dim]); the
    distractors swap in the other sizes. The shape is read from the recorded activation, not from the config."""
    c, acts = s.config, s.trace().activations
    T = int(s.input_ids.shape[1])
    if of == "ffn_hidden":
        got = tuple(acts["blocks.0.mlp.hook_post"][0].shape)
    elif of == "logits":
        got = tuple(s.trace().logits[0].shape)
    elif of == "head":
        got = tuple(acts["blocks.0.attn.hook_q"][0, :, 0].shape) if acts["blocks.0.attn.hook_q"].dim() == 4 else (T, c.head_dim)
    else:
        got = tuple(acts["blocks.0.hook_resid_mid"][0].shape)
    sizes = [c.hidden_size, c.intermediate_size, c.vocab_size, c.head_dim, c.num_attention_heads]
    correct = _shape(*got)
    wrong = [_shape(T, d) for d in sizes] + [_shape(got[1], T), _shape(1, got[1])]
    return Answer(correct=correct, distractors=_others(correct, wrong),
                  values={"T": T, "H": c.hidden_size, "I": c.intermediate_size, "V": c.vocab_size, "shape": correct})


def _walk(s: StepInputs, layer: int):
    from analysis.anatomy import shape_walkthrough

    return shape_walkthrough(s.trace(), s.config.norm_position, layer=layer - 1)


@answer("largest_walk_step")
def largest_walk_step(s: StepInputs, steps: list | None = None, layer: int = 1) -> Answer:
    """Of the block walk-through's steps (``steps``: their numbers, default every step with a tensor), the one
    whose output has the largest mean L2 norm; options are the steps' formulas (the same in both languages)."""
    walk = _walk(s, layer).dropna(subset=["mean_norm"])
    if steps:
        walk = walk[walk["step"].isin(steps)]
    top = walk.loc[walk["mean_norm"].idxmax()]
    low = walk.loc[walk["mean_norm"].idxmin()]
    # steps within 1 % of the largest (two norms' outputs at init both sit at ~√H) are one option: "both"
    tied = walk[walk["mean_norm"] >= top["mean_norm"] * (1 - 1e-2)].sort_values("step")
    wrong = walk[walk["mean_norm"] < top["mean_norm"] * (1 - 1e-2)].sort_values("mean_norm")[-4:]
    names = [str(f) for f in tied["formula"]]
    correct = names[0] if len(names) == 1 else _bi(" and ".join(names) + " (tied)", " 和 ".join(names) + "（并列）")
    return Answer(correct=correct, distractors=[str(f) for f in wrong["formula"]],
                  values={"top": correct, "top_norm": float(top["mean_norm"]), "low": str(low["formula"]),
                          "low_norm": float(low["mean_norm"]), "sqrt_h": math.sqrt(s.config.hidden_size),
                          "tied_norm": float(tied["mean_norm"].min())},
                  highlight={"x": [int(v) for v in tied["step"]] if len(tied) > 1 else int(top["step"])},
                  scores=[float(tied["mean_norm"].min()), *(float(v) for v in wrong["mean_norm"])])


def _depth_label(depth: int, L: int) -> dict:
    if depth == 0:
        return _bi("the embedding", "嵌入层")
    if depth == L + 1:
        return _bi("after the final norm", "最终归一化之后")
    return _bi(f"block {depth}", f"第 {depth} 块")


@answer("largest_residual_depth")
def largest_residual_depth(s: StepInputs) -> Answer:
    """Where the residual stream's mean L2 norm (over positions) is largest: the embedding, block i or after
    the final norm (:func:`analysis.norms.residual_norms`)."""
    from analysis.norms import residual_norms

    res = residual_norms(s.trace(), s.tokens)
    mean = res.groupby("depth")["norm"].mean()
    L = s.config.num_hidden_layers
    top = int(mean.idxmax())
    order = [int(d) for d in mean.sort_values(ascending=False).index]
    last, final = float(mean[L]), float(mean[L + 1])
    return Answer(correct=_depth_label(top, L), distractors=[_depth_label(d, L) for d in order[1:4]],
                  values={"where": _depth_label(top, L), "norm": float(mean[top]), "embed": float(mean[0]),
                          "final": final, "last": last, "L": L, "ratio": round(final / last),
                          "sqrt_h": math.sqrt(s.config.hidden_size)},
                  highlight={"x": top}, scores=[float(mean[d]) for d in order[:4]],
                  runner_up=float(mean[order[4]]) if len(order) > 4 else None)


@answer("residual_norm_at")
def residual_norm_at(s: StepInputs, depth: int = -1) -> Answer:
    """A numeric estimate: the mean L2 norm of the residual stream after block ``depth`` (-1 = the last)."""
    from analysis.norms import residual_norms

    L = s.config.num_hidden_layers
    d = L if depth == -1 else depth
    mean = residual_norms(s.trace(), s.tokens).groupby("depth")["norm"].mean()
    return Answer(correct=float(mean[d]), values={"norm": float(mean[d]), "block": d, "h": s.config.hidden_size,
                                                  "sqrt_h": math.sqrt(s.config.hidden_size)}, highlight={"x": d})


def _placement_pair(s: StepInputs, depth: int):
    from analysis.prepost import norm_placement_pair, placement_divergence
    from engine.seeding import seeded

    model = s.model
    if depth != s.config.num_hidden_layers:  # what the Pre vs Post page builds at another depth: same seed
        with seeded(int(s.setting("cfg.seed", 0))):
            model = CausalLM(s.config.replace(num_hidden_layers=depth)).eval()
    pre, post = norm_placement_pair(model)
    return placement_divergence(pre, post, s.input_ids)


@answer("placement_larger_norm")
def placement_larger_norm(s: StepInputs) -> Answer:
    """The same weights under Pre-Norm and Post-Norm, ``prepost.depth`` blocks: whose last hidden state has the
    larger mean norm (:func:`analysis.prepost.placement_divergence`)."""
    depth = int(s.setting("prepost.depth", s.config.num_hidden_layers))
    div = _placement_pair(s, depth)
    last = div.iloc[-1]
    pre, post = float(last["pre_norm"]), float(last["post_norm"])
    label = {"pre": "Pre-Norm", "post": "Post-Norm"}
    top = "pre" if pre > post else "post"
    return Answer(correct=label[top], distractors=[label["post" if top == "pre" else "pre"],
                                                   _bi("about equal", "差不多一样")],
                  values={"pre": pre, "post": post, "depth": depth, "ratio": max(pre, post) / min(pre, post),
                          "sqrt_h": math.sqrt(s.config.hidden_size)},
                  highlight={"x": depth})


def _count(model: CausalLM) -> int:
    return sum(p.numel() for p in model.parameters())


@answer("total_parameters")
def total_parameters(s: StepInputs) -> Answer:
    """The model's parameter count (shared tensors once); distractors from the usual slips: the head counted
    twice or not at all, one block's parameters times the layers without the embedding."""
    from analysis.anatomy import parameter_table

    c = s.config
    table = parameter_table(s.model)
    total = int(table["params"].sum())
    vh = c.vocab_size * c.hidden_size
    blocks = int(table[table["component"].isin(["self_attn", "mlp", "block norms"])]["params"].sum())
    wrong = [total - vh if not c.tie_word_embeddings else total + vh, blocks, total * c.num_hidden_layers]
    heads = 0 if c.tie_word_embeddings else vh
    return Answer(correct=total, distractors=_others(total, wrong), values={
        "total": total, "blocks": blocks, "L": c.num_hidden_layers, "per_block": blocks // c.num_hidden_layers,
        "embed": vh, "rest": total - blocks, "head": heads, "final_norm": total - blocks - vh - heads},
        highlight={"x": "mlp" if c.tie_word_embeddings else "lm_head"})


@answer("kept_logits_shape")
def kept_logits_shape(s: StepInputs) -> Answer:
    """``logits_to_keep = k`` (the Loss page's ``loss.keep``): the shape of the kept logits
    (:func:`analysis.loss.logits_to_keep_check`); distractors: the full shape, k × H, k × T."""
    from analysis.loss import logits_to_keep_check

    k = int(s.setting("loss.keep", 1))
    res = logits_to_keep_check(s.model, s.input_ids, k)
    kept, full = _shape(*res["kept_shape"]), _shape(*res["full_shape"])
    T, V, H = int(s.input_ids.shape[1]), s.config.vocab_size, s.config.hidden_size
    return Answer(correct=kept, distractors=_others(kept, [full, _shape(1, k, H), _shape(1, V, k)]),
                  values={"kept": kept, "full": full, "k": k, "T": T, "V": V, "saved": (T - res["kept_shape"][1]) * V,
                          "diff": float(res["max_abs_diff"])})


def _labels(s: StepInputs) -> torch.Tensor:
    from engine.loss import mask_prompt

    return mask_prompt(s.input_ids, int(s.setting("loss.prompt_len", 0)))


@answer("supervised_targets")
def supervised_targets(s: StepInputs) -> Answer:
    """How many positions the loss averages over with the first ``loss.prompt_len`` tokens masked (-100):
    counted from :func:`analysis.loss.loss_table`; distractors forget the shift or the mask."""
    from analysis.loss import loss_table
    from analysis.trace import run_trace

    labels = _labels(s)
    df = loss_table(run_trace(s.model, s.input_ids, labels), s.input_ids, labels, s.tokens)
    n = int((~df["masked"]).sum())
    T, p = int(s.input_ids.shape[1]), int(s.setting("loss.prompt_len", 0))
    return Answer(correct=n, distractors=_others(n, [T, T - 1, max(T - p - 1, 0), T - p + 1]),
                  values={"n": n, "T": T, "p": p, "rows": T - 1, "masked": T - 1 - n}, highlight={})


@answer("mean_loss")
def mean_loss(s: StepInputs) -> Answer:
    """A numeric estimate: the mean cross-entropy over the supervised targets (labels shifted once, -100
    ignored), next to ln V, the loss of a uniform guess."""
    from analysis.trace import run_trace

    out = run_trace(s.model, s.input_ids, _labels(s))
    V = s.config.vocab_size
    return Answer(correct=float(out.loss), values={"loss": float(out.loss), "V": V, "ln_v": math.log(V),
                                                  "ppl": math.exp(float(out.loss))})


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
    return Answer(correct=r(frac), distractors=_others(r(frac), [0.5, r((T + 1) / (2 * T)), r(1 / T)]),
                  values={"T": T, "removed": removed, "cells": T * T, "kept": T * T - removed,
                          "percent": _bi(f"{100 * frac:.1f} %", f"{100 * frac:.1f}%")})


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
    return Answer(correct=got, distractors=_others(got, [float(c.head_dim), round(math.sqrt(c.hidden_size), 3),
                                                         float(c.hidden_size), 1.0]),
                  values={"d": c.head_dim, "scale": got, "H": c.hidden_size, "heads": c.num_attention_heads})


@answer("first_row_weight")
def first_row_weight(s: StepInputs) -> Answer:
    """The weight the first position puts on itself after the softmax (its only visible key: exactly 1)."""
    layer, head = int(s.setting("attn.layer", 1)) - 1, int(s.setting("attn.head", 1)) - 1
    p = s.trace().attentions[layer][0, head]
    T = int(p.shape[-1])
    w = round(float(p[0, 0]), 3)
    return Answer(correct=w, distractors=_others(w, [round(1 / T, 3), 0.5, 0.0]),
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
    "even": (_bi("almost evenly: no weight is 10 % above 1/T", "几乎平均：没有哪个权重比 1/T 高出 10%"), (0.0, 1.1)),
    "favourite": (_bi("one clear favourite: 2 to 5 times 1/T", "有一个明显的偏好：1/T 的 2 到 5 倍"), (2.0, 5.0)),
    "half": (_bi("one position takes more than half", "一个位置拿走一半以上"), (None, math.inf)),
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
    return Answer(correct=tokens[0], distractors=_others(tokens[0], tokens[1:]),
                  values={"top": tokens[0], "p": float(table["probability"].iloc[0]), "temp": temp,
                          "second": tokens[1] if len(tokens) > 1 else tokens[0]},
                  highlight={"y": 0})


@answer("temperature_effect")
def temperature_effect(s: StepInputs, low: float = 0.5, high: float = 1.0) -> Answer:
    """Lowering the temperature from ``high`` to ``low``: does the top token's probability rise, fall or stay?"""
    p_low, p_high = float(_next_probs(s, low).max()), float(_next_probs(s, high).max())
    up, down, same = _bi("it rises", "变大"), _bi("it falls", "变小"), _bi("it stays the same", "不变")
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
    return Answer(correct=ratio, distractors=_others(ratio, [round(f, 2), round(f * f, 2), round(f ** 3, 2)]),
                  values={"ratio": ratio, "short": short, "long": long, "linear": f, "square": f * f,
                          "a": a, "b": b})


COST_GROWTH = {  # the cost of twice the tokens, as a multiple of the shorter sequence's
    "linear": (_bi("exactly 2× (it grows linearly)", "正好 2 倍（线性增长）"), (2.0, 2.0)),
    "bit_more": (_bi("a little more than 2× (between 2× and 2.5×)", "比 2 倍多一点（2 到 2.5 倍之间）"), (2.0, 2.5)),
    "quadratic": (_bi("about 4× (it grows with T²)", "大约 4 倍（按 T² 增长）"), (3.5, 4.5)),
    "cubic": (_bi("about 8×", "大约 8 倍"), (7.0, 9.0)),
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


# ---- the FFN ------------------------------------------------------------------------------------------------
@answer("zero_activations")
def zero_activations(s: StepInputs, layer: int = 1) -> Answer:
    """The percentage of the FFN's hidden activations (after the activation function, ``mlp.hook_post``) that
    are exactly zero in block ``layer``."""
    post = s.trace().activations[f"blocks.{layer - 1}.mlp.hook_post"][0]
    pct = 100.0 * float((post == 0).float().mean())
    neg = 100.0 * float((s.trace().activations[f"blocks.{layer - 1}.mlp.hook_pre"][0] < 0).float().mean())
    return Answer(correct=pct, values={"pct": _bi(f"{pct:.0f} %", f"{pct:.0f}%"), "neg": _bi(f"{neg:.0f} %", f"{neg:.0f}%"),
                                       "n": int(post.numel()), "act": s.config.hidden_act})


@answer("zero_share_choice")
def zero_share_choice(s: StepInputs, layer: int = 1) -> Answer:
    """The same share as a choice between none, about half and all (the activation decides: ReLU zeroes every
    negative input, GELU almost none)."""
    post = s.trace().activations[f"blocks.{layer - 1}.mlp.hook_post"][0]
    frac = float((post == 0).float().mean())
    none, half, most = _bi("none (0 %)", "一个也没有（0%）"), _bi("roughly half", "大约一半"), _bi("all of them", "全部")
    correct = none if frac == 0 else most if frac == 1 else half
    return Answer(correct=correct, distractors=[o for o in (none, half, most) if o != correct],
                  values={"pct": _bi(f"{100 * frac:.0f} %", f"{100 * frac:.0f}%"), "act": s.config.hidden_act,
                          "n": int(post.numel())})


@answer("larger_norm")
def larger_norm(s: StepInputs, a: int = 1, b: int = 2, layer: int = 1) -> Answer:
    """Of two steps of the block walk-through (their numbers), which output has the larger mean L2 norm;
    options are their formulas, or "equal"."""
    walk = _walk(s, layer).set_index("step")
    na, nb = float(walk.loc[a, "mean_norm"]), float(walk.loc[b, "mean_norm"])
    fa, fb = str(walk.loc[a, "formula"]), str(walk.loc[b, "formula"])
    correct = fa if na > nb else fb
    return Answer(correct=correct, distractors=[fb if correct == fa else fa, _bi("about the same", "差不多")],
                  values={"a": fa, "b": fb, "na": na, "nb": nb, "sqrt_h": math.sqrt(s.config.hidden_size),
                          "ratio": max(na, nb) / max(min(na, nb), 1e-30)},
                  highlight={"x": a if na > nb else b})
