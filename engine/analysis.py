"""Model outputs -> tidy pandas DataFrames, the single source of every number the app shows.

Every function here is pure with respect to the model: it runs under ``torch.no_grad`` (or takes gradients
with ``torch.autograd.grad``, which never writes ``.grad``), never registers hooks and never changes a
parameter, so a model shared between browser sessions stays untouched.

Column vocabulary: ``layer`` (int, 0-based block index, or -1/L for embedding/final rows where noted),
``position`` (int, 0-based token index), ``head`` (int, 0-based), ``token`` (display string).
References: TransformerLens activation names; Xiong et al. 2020 (gradient norms by depth).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from . import generation
from .config import ModelConfig
from .layers import norm_statistics_dtype
from .loss import IGNORE_INDEX
from .model import CausalLM, CausalLMOutput

ATTENTION_STAGES = ("raw", "scaled", "masked", "softmax")


@torch.no_grad()
def run_trace(model: CausalLM, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> CausalLMOutput:
    """Forward with everything recorded: hidden states, attentions and the full activation record.

    Args:
        input_ids: ``[B, T]``; labels: optional ``[B, T]`` aligned labels (-100 = unsupervised).
    Returns:
        :class:`CausalLMOutput` with ``hidden_states``, ``attentions`` and ``activations`` filled.
    Raises:
        ValueError: see :meth:`CausalLM.forward`.
    """
    return model(input_ids, labels=labels, output_attentions=True, output_hidden_states=True, output_activations=True)


def _vector_norm(x: torch.Tensor) -> np.ndarray:
    """L2 norm over the hidden dimension of ``[T, H]`` -> ``[T]`` float64 numpy."""
    return torch.linalg.vector_norm(x.double(), dim=-1).cpu().numpy()


def residual_stream(out: CausalLMOutput) -> list[torch.Tensor]:
    """The L+1 residual-stream states before the final norm, each ``[B, T, H]``: the embedding output, then
    the output of every block (``blocks.{i}.hook_resid_post``).

    ``out.hidden_states`` follows transformers (its last entry is after the final norm), so block L's raw
    output comes from the activation record: ``out`` must be a :func:`run_trace` (``output_activations=True``) output.
    """
    L = sum(1 for k in out.activations if k.endswith(".hook_resid_post"))
    return [out.activations["blocks.0.hook_resid_pre"]] + [out.activations[f"blocks.{i}.hook_resid_post"] for i in range(L)]


def residual_norms(out: CausalLMOutput, tokens: Sequence[str], batch: int = 0) -> pd.DataFrame:
    """L2 norm of the residual stream at every depth and position.

    Rows: depth 0 = embedding output, depth i = output of block i (1..L), depth L+1 = after the final norm.
    Columns: ``depth`` (int), ``stage`` ("embed", "block i", "final norm"), ``position``, ``token``, ``norm``.
    """
    states = residual_stream(out) + [out.activations["ln_final.hook_normalized"]]
    L = len(states) - 2
    rows = []
    for depth, h in enumerate(states):
        stage = "embed" if depth == 0 else ("final norm" if depth == L + 1 else f"block {depth}")
        for pos, value in enumerate(_vector_norm(h[batch])):
            rows.append((depth, stage, pos, tokens[pos], float(value)))
    return pd.DataFrame(rows, columns=["depth", "stage", "position", "token", "norm"])


def sublayer_norms(out: CausalLMOutput, batch: int = 0) -> pd.DataFrame:
    """Mean over positions of the L2 norm of each block's attention output and MLP output.

    Columns: ``layer`` (0-based), ``component`` ("attn_out" or "mlp_out"), ``norm`` (mean over positions),
    ``norm_max`` (max over positions).
    """
    L = len(out.attentions)
    rows = []
    for i in range(L):
        for comp, key in (("attn_out", "hook_attn_out"), ("mlp_out", "hook_mlp_out")):
            n = _vector_norm(out.activations[f"blocks.{i}.{key}"][batch])
            rows.append((i, comp, float(n.mean()), float(n.max())))
    return pd.DataFrame(rows, columns=["layer", "component", "norm", "norm_max"])


def attention_stage(out: CausalLMOutput, layer: int, head: int, stage: str = "softmax", batch: int = 0) -> np.ndarray:
    """One head's attention matrix at one stage of its computation, ``[T, T]`` float32 (queries x keys).

    Stages: "raw" = Q K^T; "scaled" = Q K^T / sqrt(head_dim); "masked" = scaled with future cells removed;
    "softmax" = the probabilities. Future cells (key > query) are NaN in "masked" and "softmax", so charts
    draw them as empty; in "raw" and "scaled" every cell is a real number (the mask is not applied yet).

    Raises:
        ValueError: unknown stage (valid ones listed).
    """
    if stage not in ATTENTION_STAGES:
        raise ValueError(f"unknown stage {stage!r}; valid: {', '.join(ATTENTION_STAGES)}")
    prefix = f"blocks.{layer}.attn."
    raw = out.activations[prefix + "hook_attn_scores_raw"][batch, head]  # (T, T)
    T = raw.shape[-1]
    if stage == "raw":
        m = raw
    elif stage == "scaled":
        m = raw / math.sqrt(out.activations[prefix + "hook_q"].shape[-1])
    elif stage == "masked":
        m = out.activations[prefix + "hook_attn_scores"][batch, head]
    else:
        m = out.activations[prefix + "hook_pattern"][batch, head]
    m = m.float().cpu().numpy().copy()
    if stage in ("masked", "softmax"):
        m[np.triu(np.ones((T, T), dtype=bool), k=1)] = np.nan  # future: not part of the distribution
    return m


def attention_long(out: CausalLMOutput, tokens: Sequence[str], batch: int = 0) -> pd.DataFrame:
    """All attention probabilities in long format, causal cells only (key <= query).

    Columns: ``layer``, ``head``, ``query``, ``key``, ``query_token``, ``key_token``, ``weight``.
    """
    frames = []
    for i, att in enumerate(out.attentions):
        a = att[batch].float().cpu().numpy()  # (nh, T, T)
        nh, T, _ = a.shape
        h_idx, q_idx, k_idx = np.nonzero(np.tril(np.ones((T, T), dtype=bool))[None].repeat(nh, 0))
        frames.append(pd.DataFrame({
            "layer": i, "head": h_idx, "query": q_idx, "key": k_idx,
            "query_token": [tokens[q] for q in q_idx], "key_token": [tokens[k] for k in k_idx],
            "weight": a[h_idx, q_idx, k_idx],
        }))
    return pd.concat(frames, ignore_index=True)


def attention_checks(out: CausalLMOutput, batch: int = 0) -> pd.DataFrame:
    """Sanity checks per layer: max |row sum - 1|, max |weight above the diagonal|, and NaN/Inf presence.

    Columns: ``layer``, ``max_row_sum_error``, ``max_upper_triangle``, ``finite``.
    """
    rows = []
    for i, att in enumerate(out.attentions):
        a = att[batch].double()  # (nh, T, T)
        T = a.shape[-1]
        upper = torch.ones(T, T, dtype=torch.bool).triu(1)
        rows.append((
            i,
            float((a.sum(-1) - 1).abs().max()),
            float(a[:, upper].abs().max()) if T > 1 else 0.0,
            bool(torch.isfinite(a).all()),
        ))
    return pd.DataFrame(rows, columns=["layer", "max_row_sum_error", "max_upper_triangle", "finite"])


def head_entropy(out: CausalLMOutput, batch: int = 0) -> pd.DataFrame:
    """Mean attention entropy per head, in nats (0 = attends to one key; ln(t+1) = uniform over t+1 keys).

    Columns: ``layer``, ``head``, ``entropy`` (mean over query positions), ``max_entropy`` (mean of ln(t+1),
    the uniform-attention reference).
    """
    rows = []
    for i, att in enumerate(out.attentions):
        a = att[batch].double()  # (nh, T, T)
        ent = -(torch.where(a > 0, a * a.log(), torch.zeros_like(a))).sum(-1)  # (nh, T)
        T = a.shape[-1]
        uniform = float(torch.log(torch.arange(1, T + 1, dtype=torch.float64)).mean())
        for h in range(a.shape[0]):
            rows.append((i, h, float(ent[h].mean()), uniform))
    return pd.DataFrame(rows, columns=["layer", "head", "entropy", "max_entropy"])


def loss_table(out: CausalLMOutput, input_ids: torch.Tensor, labels: torch.Tensor, tokens: Sequence[str],
               batch: int = 0) -> pd.DataFrame:
    """Per-position loss accounting, one row per predicting position t = 0 .. T-2.

    Columns: ``position`` (t), ``input_token`` (token at t), ``target_token`` (token at t+1), ``masked``
    (label at t+1 is -100), ``loss`` (nats, NaN when masked), ``contribution`` (loss / number of supervised
    targets, NaN when masked), ``share`` (contribution / mean loss, a fraction). Supervised contributions sum
    to ``out.loss``; with no supervised target every loss and contribution is NaN.
    """
    tl = out.token_losses[batch].double().cpu().numpy()  # (T-1,)
    lab = labels[batch, 1:].cpu().numpy()
    masked = lab == IGNORE_INDEX
    n = int((~masked).sum())
    contribution = tl / n if n else np.full_like(tl, np.nan)
    mean = float(np.nansum(tl) / n) if n else float("nan")
    share = contribution / mean if n and mean != 0 else np.full_like(tl, np.nan)
    T = input_ids.shape[1]
    return pd.DataFrame({
        "position": np.arange(T - 1),
        "input_token": list(tokens[: T - 1]),
        "target_token": list(tokens[1:T]),
        "masked": masked,
        "loss": tl,
        "contribution": contribution,
        "share": share,
    })


def gradient_norms(model: CausalLM, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> pd.DataFrame:
    """L2 norm of the LM-loss gradient of each block's parameters (and the embedding and head).

    Uses ``torch.autograd.grad``, so no ``.grad`` field of the (possibly shared) model is written.
    Columns: ``layer`` (0..L-1 blocks; -1 embedding; L final norm + head), ``component`` ("embed",
    "block i", "final norm + head"), ``grad_norm``. NaN everywhere when no target is supervised.

    Raises:
        ValueError: see :meth:`CausalLM.forward`.
    """
    labels = input_ids if labels is None else labels
    with torch.enable_grad():
        out = model(input_ids, labels=labels)
        groups: list[tuple[int, str, list[torch.nn.Parameter]]] = [(-1, "embed", list(model.embed_tokens.parameters())
                                                                    + (list(model.embed_positions.parameters())
                                                                       if model.embed_positions is not None else []))]
        for i, layer in enumerate(model.layers):
            groups.append((i, f"block {i + 1}", list(layer.parameters())))
        L = len(model.layers)
        head = list(model.norm.parameters())
        if model.lm_head.weight is not model.embed_tokens.weight:
            head.append(model.lm_head.weight)
        groups.append((L, "final norm + head", head))
        params = [p for _, _, ps in groups for p in ps]
        if not torch.isfinite(out.loss):
            return pd.DataFrame([(i, c, float("nan")) for i, c, _ in groups], columns=["layer", "component", "grad_norm"])
        grads = torch.autograd.grad(out.loss, params, allow_unused=True)
    rows, k = [], 0
    for i, comp, ps in groups:
        sq = 0.0
        for _ in ps:
            g = grads[k]
            k += 1
            if g is not None:
                sq += float(g.double().pow(2).sum())
        rows.append((i, comp, math.sqrt(sq)))
    return pd.DataFrame(rows, columns=["layer", "component", "grad_norm"])


# ---- describing a per-block profile: one rule for every sentence about gradient norms by depth ----
FLAT_RATIO = 1.25  # values within a factor 1.25 of each other (max / min) are "roughly flat"
STEP_SLACK = 1.10  # a trend may step back by at most 10 % between neighbouring blocks and still count


def trend_kind(values: Sequence[float]) -> str:
    """One word for positive values along depth: "flat", "grows", "shrinks" or "mixed".

    "flat": ``max / min <= FLAT_RATIO``. "grows" / "shrinks": the first value is the lowest / highest and the last
    the highest / lowest, more than ``FLAT_RATIO`` apart, and no step between neighbours goes the other way by
    more than ``STEP_SLACK``. Anything else is "mixed". Fewer than two values, or a value that is not finite and
    positive: "".
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2 or not (np.isfinite(v).all() and (v > 0).all()):
        return ""
    if v.max() / v.min() <= FLAT_RATIO:
        return "flat"
    steps = v[1:] / v[:-1]
    if v[0] == v.min() and v[-1] == v.max() and (steps >= 1 / STEP_SLACK).all():
        return "grows"
    if v[0] == v.max() and v[-1] == v.min() and (steps <= STEP_SLACK).all():
        return "shrinks"
    return "mixed"


def depth_profile(values: Sequence[float]) -> dict:
    """The one rule the pages use to put a per-block profile (block 1 .. L) into words.

    Block 1 is described on its own, against block 2 (under Post-Norm it is the only block that reads the raw
    embedding, and often stands apart), then blocks 2 .. L as one trend (:func:`trend_kind`).

    Returns:
        ``{"L", "first", "second", "last", "step": block 2 / block 1, "step_kind": trend_kind of blocks 1-2,
        "rest_kind": trend_kind of blocks 2..L ("" when L < 3), "rest_ratio": block L / block 2,
        "rest_spread": max / min over blocks 2..L, "rest_lowest", "rest_highest": 1-based blocks}``; ``L < 2`` or
        a value that is not finite and positive gives ``{"L": L}`` only.
    """
    v = np.asarray(values, dtype=np.float64)
    L = int(v.size)
    if L < 2 or not (np.isfinite(v).all() and (v > 0).all()):
        return {"L": L}
    rest = v[1:]
    return {
        "L": L, "first": float(v[0]), "second": float(v[1]), "last": float(v[-1]),
        "step": float(v[1] / v[0]), "step_kind": trend_kind(v[:2]),
        "rest_kind": trend_kind(rest) if L >= 3 else "",
        "rest_ratio": float(v[-1] / v[1]), "rest_spread": float(rest.max() / rest.min()),
        "rest_lowest": int(rest.argmin()) + 2, "rest_highest": int(rest.argmax()) + 2,
    }


def last_block_gradient_by_depth(config: ModelConfig, seed: int, input_ids: torch.Tensor, depths: Sequence[int],
                                 progress=None) -> pd.DataFrame:
    """Xiong et al. 2020, Theorem 1: the LM-loss gradient of the last block against the number of blocks L.

    For each L in ``depths`` a model ``CausalLM(config.replace(num_hidden_layers=L))`` is initialised with
    ``seed`` (as the sidebar builds it), and its Pre-Norm / Post-Norm twin shares its weights
    (:func:`norm_placement_pair`). Only the last block's parameters are differentiated (``torch.autograd.grad``:
    no ``.grad`` written, and autograd stops at that block). Labels = ``input_ids`` ``[1, T]``, T >= 2.

    Args:
        progress: optional callable ``(done, total)`` called after each depth.
    Returns:
        Columns ``layers`` (L), ``placement`` ("pre"/"post"), ``grad_norm`` (L2 norm over all gradients of block L).
    """
    from .seeding import seeded

    rows = []
    for k, L in enumerate(depths):
        with seeded(seed):
            model = CausalLM(config.replace(num_hidden_layers=int(L)))
        for placement, m in zip(("pre", "post"), norm_placement_pair(model)):
            params = list(m.layers[-1].parameters())
            with torch.enable_grad():
                loss = m(input_ids, labels=input_ids).loss
                grads = torch.autograd.grad(loss, params) if torch.isfinite(loss) else [torch.tensor(math.nan)]
            rows.append((int(L), placement, math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))))
        if progress is not None:
            progress(k + 1, len(depths))
    return pd.DataFrame(rows, columns=["layers", "placement", "grad_norm"])


def power_law_fit(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares line through ``(log x, log y)``: ``y ≈ c * x^slope``; returns ``(slope, c)``.

    Non-finite or non-positive points are left out; fewer than two points left gives ``(nan, nan)``.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 2:
        return math.nan, math.nan
    slope, intercept = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return float(slope), float(math.exp(intercept))


def inverse_sqrt_reference(x: Sequence[float], y: Sequence[float]) -> float:
    """The ``c`` of the reference curve ``c / sqrt(x)`` closest to the points in log space (geometric mean of
    ``y * sqrt(x)`` over the finite, positive points; NaN when there are none)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return float(np.exp(np.mean(np.log(y[ok]) + 0.5 * np.log(x[ok])))) if ok.any() else math.nan


def norm_placement_pair(model: CausalLM) -> tuple[CausalLM, CausalLM]:
    """The same weights under Pre-Norm and Post-Norm: ``(pre_model, post_model)``.

    The given model is one of the two (returned as is, never modified); the other is a new model built
    from ``config.replace(norm_position=...)`` that loads the same state dict in strict mode with
    ``assign=True``, so both share their parameter tensors: read-only use only, like every cached model.
    """
    other_position = "post" if model.config.norm_position == "pre" else "pre"
    other = CausalLM(model.config.replace(norm_position=other_position))
    # assign=True: the new model holds the very same storage (no copy, no extra memory). assign wraps each
    # state-dict entry in its own Parameter, so a tied head is re-tied to make it one Parameter again.
    other.load_state_dict(model.state_dict(), strict=True, assign=True)
    if model.lm_head.weight is model.embed_tokens.weight:
        other.lm_head.weight = other.embed_tokens.weight
    return (model, other) if model.config.norm_position == "pre" else (other, model)


@torch.no_grad()
def placement_divergence(pre: CausalLM, post: CausalLM, input_ids: torch.Tensor, batch: int = 0) -> pd.DataFrame:
    """Per-depth divergence between Pre-Norm and Post-Norm hidden states on the same input.

    Columns: ``depth`` (0 = embedding, i = block i), ``pre_norm`` and ``post_norm`` (mean L2 norm over
    positions), ``cosine`` (mean over positions of the cosine similarity), ``rel_l2`` (mean over positions of
    ``||h_pre - h_post|| / ||h_pre||``).
    """
    hp = residual_stream(pre(input_ids, output_activations=True))  # depth 0..L, before the final norm
    hq = residual_stream(post(input_ids, output_activations=True))
    rows = []
    for depth, (a, b) in enumerate(zip(hp, hq)):
        a, b = a[batch].double(), b[batch].double()  # (T, H)
        na, nb = a.norm(dim=-1), b.norm(dim=-1)  # (T,)
        cos = torch.nn.functional.cosine_similarity(a, b, dim=-1)  # (T,)
        rel = (a - b).norm(dim=-1) / na.clamp_min(1e-30)  # (T,)
        rows.append((depth, float(na.mean()), float(nb.mean()), float(cos.mean()), float(rel.mean())))
    return pd.DataFrame(rows, columns=["depth", "pre_norm", "post_norm", "cosine", "rel_l2"])


def parameter_table(model: CausalLM) -> pd.DataFrame:
    """Parameter counts grouped by component type, tied weights counted once.

    Columns: ``component`` ("embed_tokens", "embed_positions", "self_attn", "mlp", "block norms" (the two
    norms of every block), "final norm", "lm_head"), ``params``, ``share`` (fraction of the total). Plus :func:`tying_savings` for the head.
    """
    groups: dict[str, int] = {}
    for name, count in model.parameter_breakdown():
        key = name.split(".")[-1] if name.startswith("layers.") else name
        key = {"norms": "block norms", "norm": "final norm"}.get(key, key)
        groups[key] = groups.get(key, 0) + count
    total = sum(groups.values())
    return pd.DataFrame([(k, v, v / total) for k, v in groups.items()], columns=["component", "params", "share"])


def tying_savings(config: ModelConfig) -> int:
    """Parameters saved by tying the LM head to the embedding: V * H (0 when untied)."""
    return config.vocab_size * config.hidden_size if config.tie_word_embeddings else 0


def shape_walkthrough(out: CausalLMOutput, norm_position: str, layer: int = 0, batch: int = 0) -> pd.DataFrame:
    """Step-by-step shapes of one block on the current input (like the GPT-2 tutorial's 3-token table).

    Columns: ``step`` (1-based), ``name`` (what is computed), ``formula``, ``hook`` (TransformerLens key),
    ``shape`` (e.g. "[3, 4]" = [T, H] for one sequence), ``mean_norm`` (mean L2 norm over positions).
    Step 1 is the block's input: "embedding" for the first block (``layer=0``), "block input" (the residual
    stream leaving block ``layer``, 1-based) for the others.

    Args:
        out: a :func:`run_trace` output (needs the activation record); norm_position: "pre" or "post".
    """
    c = out.activations
    p = f"blocks.{layer}."
    pre = norm_position == "pre"
    # Step 1 is what enters the block: the embedding for block 1, the previous block's output after that.
    first = ("embedding", "x = E[ids] (+ P)") if layer == 0 else ("block input", f"x = hidden_states[{layer}]")
    steps = [
        (*first, p + "hook_resid_pre"),
        ("norm 1", "n1 = Norm(x)" if pre else "(Post-Norm: no norm before attention)", p + "ln1.hook_normalized" if pre else None),
        ("attention", "a = Attn(n1)" if pre else "a = Attn(x)", p + "hook_attn_out"),
        ("residual 1", "x1 = x + a" if pre else "x1 = Norm(x + a)", p + "hook_resid_mid"),
        ("norm 2", "n2 = Norm(x1)" if pre else "(Post-Norm: no norm before the FFN)", p + "ln2.hook_normalized" if pre else None),
        ("FFN", "f = FFN(n2)" if pre else "f = FFN(x1)", p + "hook_mlp_out"),
        ("residual 2", "x2 = x1 + f" if pre else "x2 = Norm(x1 + f)", p + "hook_resid_post"),
    ]
    rows = []
    for k, (name, formula, hook) in enumerate(steps, 1):
        if hook is None:
            rows.append((k, name, formula, "", "", float("nan")))
            continue
        t = c[hook][batch]  # (T, H)
        rows.append((k, name, formula, hook, str(list(t.shape)), float(_vector_norm(t).mean())))
    return pd.DataFrame(rows, columns=["step", "name", "formula", "hook", "shape", "mean_norm"])


def next_token_table(logits: torch.Tensor, token_strings, k: int = 10, temperature: float = 1.0) -> pd.DataFrame:
    """Top-k next-token probabilities from one position's logits ``[V]``.

    ``p = softmax(logits / temperature)``. Columns: ``rank`` (1-based), ``token_id``, ``token``,
    ``logit``, ``probability``.

    Args:
        token_strings: callable ``list[int] -> list[str]`` giving display strings.
    Raises:
        ValueError: temperature <= 0 or k < 1.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # (V,)
    top = torch.topk(probs, min(k, probs.numel()))
    ids = top.indices.tolist()
    return pd.DataFrame({
        "rank": np.arange(1, len(ids) + 1),
        "token_id": ids,
        "token": token_strings(ids),
        "logit": logits[ids].double().cpu().numpy(),
        "probability": top.values.cpu().numpy(),
    })


@torch.no_grad()
def generate(model: CausalLM, input_ids: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             greedy: bool = True, seed: int = 0) -> list[int]:
    """Continue ``input_ids`` ``[1, T]`` by ``max_new_tokens`` tokens (greedy argmax or sampling at
    ``temperature``) with :func:`engine.generation.generate` (KV cache, seeded per step).

    Stops early at the model's position limit. Returns the new token ids (without the prompt).
    """
    out = generation.generate(model, input_ids, max_new_tokens, do_sample=not greedy, temperature=temperature,
                              seed=seed)  # (1, T + n)
    return out[0, input_ids.shape[1]:].tolist()


def norm_overflow_limit(dtype: torch.dtype) -> float:
    """Largest residual-stream magnitude a norm can take in ``dtype``: ``sqrt(finfo(stats dtype).max)``.

    The norms compute their statistics in :func:`engine.layers.norm_statistics_dtype` (float32 for float16
    and bfloat16, the input's own dtype otherwise); above this limit a square overflows, the variance becomes
    inf, and the norm silently returns its bias (zeros), so everything after it is finite but wrong.
    float32 and half precision: about 1.8e19; float64: about 1.3e154.
    """
    return math.sqrt(torch.finfo(norm_statistics_dtype(dtype)).max)


def finite_report(out: CausalLMOutput) -> dict[str, bool]:
    """Which outputs are numerically trustworthy: ``{"logits", "hidden_states", "attentions", "norms"}`` -> bool.

    ``hidden_states`` is False when a residual-stream state is NaN or Inf (in float16 anything above 65504 is
    Inf). ``norms`` is False when some residual-stream entry reaches :func:`norm_overflow_limit` of the dtype in
    use. The residual stream is read from the activation record when ``out`` has one (block L's output before
    the final norm), else from ``out.hidden_states``.
    """
    rep = {"logits": bool(torch.isfinite(out.logits).all())}
    if out.hidden_states is not None:
        states = residual_stream(out) if out.activations is not None else list(out.hidden_states)
        rep["hidden_states"] = all(bool(torch.isfinite(h).all()) for h in states + [out.hidden_states[-1]])
        rep["norms"] = all(bool((h.abs() < norm_overflow_limit(h.dtype)).all()) for h in states)
    if out.attentions is not None:
        rep["attentions"] = all(bool(torch.isfinite(a).all()) for a in out.attentions)
    return rep


@torch.no_grad()
def logits_to_keep_check(model: CausalLM, input_ids: torch.Tensor, k: int) -> dict:
    """Compare ``model(input_ids, logits_to_keep=k)`` with the last k positions of the full logits.

    Both forwards take the same (non-cached) path, so only the LM head's input differs: the kept run applies
    the head to the last ``min(k, T)`` hidden states only (transformers' ``logits_to_keep`` idea; generation
    needs just the last position).

    Args:
        input_ids: ``[1, T]``; k: number of positions to keep, ``>= 1``.
    Returns:
        ``{"kept_shape": [1, k', V], "full_shape": [1, T, V], "max_abs_diff": float (logit units),
        "scale": max |logit| of the full logits, "equal": bool (torch.equal, bit-for-bit)}`` with ``k' = min(k, T)``.
    Raises:
        ValueError: ``k < 1``, or invalid ``input_ids`` (see :meth:`CausalLM.forward`).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    full = model(input_ids).logits  # (1, T, V)
    kept = model(input_ids, logits_to_keep=k).logits  # (1, k', V)
    tail = full[:, -kept.shape[1]:, :]  # (1, k', V)
    diff = (kept.double() - tail.double()).abs()
    return {
        "kept_shape": list(kept.shape),
        "full_shape": list(full.shape),
        "max_abs_diff": float(diff.max()) if diff.numel() else 0.0,
        "scale": float(full.abs().max()),
        "equal": bool(torch.equal(kept, tail)),
    }


def token_probability(logits: torch.Tensor, token_id: int, temperature: float = 1.0) -> tuple[float, int]:
    """Probability and rank of one token under ``softmax(logits / temperature)``; logits ``[V]``.

    Returns:
        ``(probability in [0, 1], rank)`` where rank 1 = most likely (ties share the better rank).
    Raises:
        ValueError: temperature <= 0 or ``token_id`` outside ``[0, V)``.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    V = logits.shape[-1]
    if not 0 <= token_id < V:
        raise ValueError(f"token id {token_id} is outside the vocabulary [0, {V})")
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # (V,)
    p = probs[token_id]
    return float(p), int((probs > p).sum()) + 1


def activation_frame(out: CausalLMOutput, hook: str, batch: int = 0) -> pd.DataFrame:
    """One cached activation as a wide table: rows = positions, columns = hidden units ``0..H-1``.

    Args:
        hook: an activation key of shape ``[B, T, H]`` (e.g. ``"blocks.0.hook_resid_mid"``).
    Raises:
        KeyError: unknown hook (the message lists the block keys); ValueError: not a ``[B, T, H]`` tensor.
    """
    if out.activations is None or hook not in out.activations:
        raise KeyError(f"{hook!r} is not in the activation record")
    x = out.activations[hook][batch]
    if x.dim() != 2:
        raise ValueError(f"{hook} has shape {tuple(out.activations[hook].shape)}, expected [B, T, H]")
    frame = pd.DataFrame(x.float().cpu().numpy())
    frame.index.name = "position"
    return frame


def training_history(history: Sequence, initial_val_loss: float | None = None) -> pd.DataFrame:
    """A training run's per-step log (``engine.train.StepInfo`` objects) as one row per step.

    Columns: ``step`` (int; 1-based updates, plus a step-0 row when ``initial_val_loss`` is given),
    ``loss`` (training loss of the step's batch, nats; NaN on the step-0 row), ``val_loss`` (nats; NaN where
    not measured), ``lr``, ``grad_norm`` (global L2 norm before clipping), ``tokens_per_s``, ``elapsed_s``.
    Empty history and no initial loss -> an empty frame with these columns.
    """
    cols = ["step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s"]
    rows = []
    if initial_val_loss is not None:
        rows.append((0, math.nan, float(initial_val_loss), math.nan, math.nan, math.nan, 0.0))
    for h in history:
        rows.append((int(h.step), float(h.loss), math.nan if h.val_loss is None else float(h.val_loss),
                     float(h.lr), float(h.grad_norm), float(h.tokens_per_s), float(h.elapsed_s)))
    return pd.DataFrame(rows, columns=cols)


def layer_grad_history(history: Sequence) -> pd.DataFrame:
    """Gradient L2 norm of every block at every step of a run (``StepInfo.layer_grad_norms``), long format.

    Columns: ``step`` (1-based), ``layer`` (0-based block index), ``grad_norm`` (L2 norm over all gradients
    of that block, before clipping).
    """
    rows = [(int(h.step), i, float(v)) for h in history for i, v in enumerate(h.layer_grad_norms)]
    return pd.DataFrame(rows, columns=["step", "layer", "grad_norm"])


def layer_grad_profile(history: Sequence) -> pd.DataFrame:
    """Per-block gradient L2 norm at the first step and averaged over all steps of a run.

    Columns: ``layer`` (0-based), ``first_step`` (norm at the run's first step), ``mean_grad_norm`` (mean over
    the steps). Empty history -> empty frame. Xiong et al. 2020 compare such depth profiles for Pre-Norm and
    Post-Norm.
    """
    grads = layer_grad_history(history)
    if grads.empty:
        return pd.DataFrame(columns=["layer", "first_step", "mean_grad_norm"])
    first = grads[grads["step"] == grads["step"].min()].set_index("layer")["grad_norm"]
    mean = grads.groupby("layer")["grad_norm"].mean()
    return pd.DataFrame({"layer": mean.index.to_numpy(), "first_step": first.reindex(mean.index).to_numpy(),
                         "mean_grad_norm": mean.to_numpy()})


def slot_attention_table(scores: Sequence[tuple[int, int, float]]) -> pd.DataFrame:
    """``engine.train.head_slot_attention`` output as a frame: columns ``layer``, ``head`` (0-based) and
    ``score`` (mean attention probability to the same slot of the previous line, in [0, 1])."""
    return pd.DataFrame(list(scores), columns=["layer", "head", "score"])
