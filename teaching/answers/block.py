"""The answer functions of the block's anatomy on the small models (lessons 1 to 3): tensor shapes, the
walk-through's norms, the residual stream, Pre- vs Post-Norm, parameter counts, the loss and the FFN's activations.

Registered with :func:`teaching.answers.core.answer` when ``teaching.lessons`` is imported.
"""

from __future__ import annotations

import math

import torch

from engine import CausalLM
from teaching.answers.core import Answer, StepInputs, answer, bi, others


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


def _shape(*dims: int) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


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
    return Answer(correct=correct, distractors=others(correct, wrong),
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
    correct = names[0] if len(names) == 1 else bi(" and ".join(names) + " (tied)", " 和 ".join(names) + "（并列）")
    return Answer(correct=correct, distractors=[str(f) for f in wrong["formula"]],
                  values={"top": correct, "top_norm": float(top["mean_norm"]), "low": str(low["formula"]),
                          "low_norm": float(low["mean_norm"]), "sqrt_h": math.sqrt(s.config.hidden_size),
                          "tied_norm": float(tied["mean_norm"].min())},
                  highlight={"x": [int(v) for v in tied["step"]] if len(tied) > 1 else int(top["step"])},
                  scores=[float(tied["mean_norm"].min()), *(float(v) for v in wrong["mean_norm"])])


def _depth_label(depth: int, L: int) -> dict:
    if depth == 0:
        return bi("the embedding", "嵌入层")
    if depth == L + 1:
        return bi("after the final norm", "最终归一化之后")
    return bi(f"block {depth}", f"第 {depth} 块")


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
                                                   bi("about equal", "差不多一样")],
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
    return Answer(correct=total, distractors=others(total, wrong), values={
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
    return Answer(correct=kept, distractors=others(kept, [full, _shape(1, k, H), _shape(1, V, k)]),
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
    return Answer(correct=n, distractors=others(n, [T, T - 1, max(T - p - 1, 0), T - p + 1]),
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


# ---- the FFN ------------------------------------------------------------------------------------------------
@answer("zero_activations")
def zero_activations(s: StepInputs, layer: int = 1) -> Answer:
    """The percentage of the FFN's hidden activations (after the activation function, ``mlp.hook_post``) that
    are exactly zero in block ``layer``."""
    post = s.trace().activations[f"blocks.{layer - 1}.mlp.hook_post"][0]
    pct = 100.0 * float((post == 0).float().mean())
    neg = 100.0 * float((s.trace().activations[f"blocks.{layer - 1}.mlp.hook_pre"][0] < 0).float().mean())
    return Answer(correct=pct, values={"pct": bi(f"{pct:.0f} %", f"{pct:.0f}%"), "neg": bi(f"{neg:.0f} %", f"{neg:.0f}%"),
                                       "n": int(post.numel()), "act": s.config.hidden_act})


@answer("zero_share_choice")
def zero_share_choice(s: StepInputs, layer: int = 1) -> Answer:
    """The same share as a choice between none, about half and all (the activation decides: ReLU zeroes every
    negative input, GELU almost none)."""
    post = s.trace().activations[f"blocks.{layer - 1}.mlp.hook_post"][0]
    frac = float((post == 0).float().mean())
    none, half, most = bi("none (0 %)", "一个也没有（0%）"), bi("roughly half", "大约一半"), bi("all of them", "全部")
    correct = none if frac == 0 else most if frac == 1 else half
    return Answer(correct=correct, distractors=[o for o in (none, half, most) if o != correct],
                  values={"pct": bi(f"{100 * frac:.0f} %", f"{100 * frac:.0f}%"), "act": s.config.hidden_act,
                          "n": int(post.numel())})


@answer("larger_norm")
def larger_norm(s: StepInputs, a: int = 1, b: int = 2, layer: int = 1) -> Answer:
    """Of two steps of the block walk-through (their numbers), which output has the larger mean L2 norm;
    options are their formulas, or "equal"."""
    walk = _walk(s, layer).set_index("step")
    na, nb = float(walk.loc[a, "mean_norm"]), float(walk.loc[b, "mean_norm"])
    fa, fb = str(walk.loc[a, "formula"]), str(walk.loc[b, "formula"])
    correct = fa if na > nb else fb
    return Answer(correct=correct, distractors=[fb if correct == fa else fa, bi("about the same", "差不多")],
                  values={"a": fa, "b": fb, "na": na, "nb": nb, "sqrt_h": math.sqrt(s.config.hidden_size),
                          "ratio": max(na, nb) / max(min(na, nb), 1e-30)},
                  highlight={"x": a if na > nb else b})
