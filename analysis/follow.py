"""Follow one token through the model: its residual stream sub-step by sub-step, and where its prediction comes from.

:func:`follow_steps` reads one position out of the shared forward's activation record (:func:`analysis.trace.run_trace`;
TransformerLens names) as one row per sub-step, in the order the block computes them: the embedding; in each block the
norm's output, attention's output, the residual after it, the norm, the FFN's output, the residual after it; the final
norm; the head. Which rows a block has depends on where its norms sit (``config.norm_position``, see
:data:`BLOCK_STEPS`): a sandwich block (Gemma 2/3) and OLMo-2's order normalise each sub-layer's output before it is
added, and those rows name the norm (``post_attention_layernorm``, ``post_feedforward_layernorm``).

:func:`logit_attribution` is direct logit attribution (as TransformerLens's ``ActivationCache.logit_attrs`` computes
it): under Pre-Norm the stream the final norm reads is a sum, ``x_L = embed (+ positions) + sum_i attn_out_i +
sum_i mlp_out_i``, and the head is linear, so once the final norm's per-position scale is *frozen* at its value for
this position, each term's share of a token's logit is ``W_U[t] . (g * s * term)``, and the shares add up to the
logit exactly (up to float rounding):

* RMSNorm: ``norm(x) = g * x / rms(x)``, ``s = 1 / rms(x_L)`` (``rms`` with its eps) frozen; Gemma's scale is ``1 + g``.
* LayerNorm: ``norm(x) = g * (x - mean(x)) * s + b``; the centring is linear (each term is centred on its own), and
  ``W_U[t] . b`` is its own row, the "norm bias".
* Post-Norm has no such sum: every block ends in a norm of ``x + sublayer(x)``, which rescales everything before it by
  a different factor at every layer. Its attribution is *not defined* here (decision: the page says so and shows no
  bars, rather than an approximation that does not add up). Sandwich and OLMo-2 placements still add each
  (normalised) sub-layer output to a plain stream, so the sum holds; their heads cannot be split, because the norm
  after attention is not linear in the heads (per-head shares need Pre-Norm).
* A final logit soft cap (Gemma 2: ``c * tanh(z / c)``) is not linear: the attribution splits ``z``, the logit
  before the cap, and says so (:attr:`Attribution.softcap`).

Layers are 0-based here (the pages number them from 1); ``position`` is 0-based. References: nostalgebraist 2020
(logit lens); Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits" (the residual stream as a sum,
direct logit attribution); TransformerLens ``ActivationCache.decompose_resid`` / ``logit_attrs``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from analysis.lens import lens_logits
from engine import CausalLM
from engine.layers import soft_cap
from engine.model import CausalLMOutput

TOP_TOKENS = 5  # lens tokens per row
TOP_KEYS = 3  # keys per attention row

#: ``config.norm_position`` -> the rows of one block: (kind, the recorded activation, the module that produced it).
#: ``kind`` names the row for the page (``follow.step.<kind>``); rows of kind ``resid_*`` are the stream itself.
BLOCK_STEPS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "pre": (("ln1", "ln1.hook_normalized", "input_layernorm"), ("attn", "hook_attn_out", "self_attn"),
            ("resid_mid", "hook_resid_mid", ""), ("ln2", "ln2.hook_normalized", "post_attention_layernorm"),
            ("mlp", "hook_mlp_out", "mlp"), ("resid_post", "hook_resid_post", "")),
    # Post-Norm: the residual rows are the norm's output of x + sublayer(x) (the stream itself is normalised)
    "post": (("attn", "hook_attn_out", "self_attn"), ("resid_mid", "hook_resid_mid", "input_layernorm"),
             ("mlp", "hook_mlp_out", "mlp"), ("resid_post", "hook_resid_post", "post_attention_layernorm")),
    "sandwich": (("ln1", "ln1.hook_normalized", "input_layernorm"),
                 ("attn_normed", "hook_attn_out", "self_attn + post_attention_layernorm"),
                 ("resid_mid", "hook_resid_mid", ""), ("ln2", "ln2.hook_normalized", "pre_feedforward_layernorm"),
                 ("mlp_normed", "hook_mlp_out", "mlp + post_feedforward_layernorm"),
                 ("resid_post", "hook_resid_post", "")),
    "post_sublayer": (("attn_normed", "hook_attn_out", "self_attn + post_attention_layernorm"),
                      ("resid_mid", "hook_resid_mid", ""),
                      ("mlp_normed", "hook_mlp_out", "mlp + post_feedforward_layernorm"),
                      ("resid_post", "hook_resid_post", "")),
}
RESIDUAL_KINDS = ("embed", "resid_mid", "resid_post")
ATTENTION_KINDS = ("attn", "attn_normed")
MLP_KINDS = ("mlp", "mlp_normed")


def _norm(v: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(v.double()))


@torch.no_grad()
def follow_steps(model: CausalLM, out: CausalLMOutput, position: int, top: int = TOP_TOKENS,
                 top_keys: int = TOP_KEYS) -> pd.DataFrame:
    """One row per sub-step of ``position``'s journey through the model.

    Args:
        model: the model that produced ``out`` (its final norm and head read the lens; read only).
        out: a :func:`analysis.trace.run_trace` output (batch 0 is read).
        position: 0-based position followed.
    Returns:
        Columns ``step`` (0-based order), ``kind`` (``embed``, a kind of :data:`BLOCK_STEPS`, ``ln_final``,
        ``logits``), ``layer`` (0-based block, -1 outside the blocks), ``hook`` (the activation's TransformerLens
        name), ``module`` (the Llama module that produced it), ``norm`` (‖the row's vector‖; for ``logits`` the
        norm of the logit vector), ``resid_norm`` (‖the residual stream‖ after this sub-step), ``delta_ratio``
        (residual rows after a sub-layer: ‖x_after - x_before‖ / ‖x_before‖), ``cosine`` (cos(x_before, x_after)),
        ``top_ids`` / ``top_probs`` (residual rows: the logit lens's top ``top`` tokens through the final norm
        and head; the ``logits`` row: the model's own output, soft-capped as the model does), ``rank_final``
        (the rank of the model's own prediction at this position in that list's distribution, 0 = top),
        ``keys`` / ``key_weights`` (attention rows: the ``top_keys`` earlier positions with the highest weight
        averaged over heads), ``experts`` / ``expert_weights`` (FFN rows of a mixture of experts: the experts
        the token was routed to and their weights). Empty lists where a column does not apply.
    """
    acts, cfg = out.activations, model.config
    if acts is None:
        raise ValueError("need a forward with output_activations=True (analysis.trace.run_trace)")
    L = cfg.num_hidden_layers
    final_id = int(out.logits[0, position].argmax())
    rows: list[dict] = []

    def add(kind: str, layer: int, hook: str, module: str, vec: torch.Tensor, stream: torch.Tensor,
            before: torch.Tensor | None = None, **extra) -> None:
        row = dict(kind=kind, layer=layer, hook=hook, module=module, norm=_norm(vec), resid_norm=_norm(stream),
                   delta_ratio=np.nan, cosine=np.nan, top_ids=[], top_probs=[], rank_final=-1, keys=[],
                   key_weights=[], experts=[], expert_weights=[])
        if before is not None:
            x, y = before.double(), stream.double()  # (H,) each
            row["delta_ratio"] = _norm(y - x) / max(_norm(x), 1e-300)
            row["cosine"] = float(torch.dot(x, y) / max(_norm(x) * _norm(y), 1e-300))
        row.update(extra)
        if kind in RESIDUAL_KINDS:
            row["_stream"] = stream
        rows.append(row)

    stream = acts["blocks.0.hook_resid_pre"][0, position]  # (H,): token embedding (+ positions)
    add("embed", -1, "hook_embed" + (" + hook_pos_embed" if "hook_pos_embed" in acts else ""),
        "embed_tokens" + (" + embed_positions" if "hook_pos_embed" in acts else ""), stream, stream)
    for i in range(L):
        for kind, hook, module in BLOCK_STEPS[cfg.norm_position]:
            vec = acts[f"blocks.{i}.{hook}"][0, position]  # (H,)
            extra = {}
            if kind in ATTENTION_KINDS:
                extra = _top_keys(acts[f"blocks.{i}.attn.hook_pattern"][0, :, position], top_keys)
            if kind in MLP_KINDS and f"blocks.{i}.mlp.hook_expert_indices" in acts:
                extra = dict(experts=acts[f"blocks.{i}.mlp.hook_expert_indices"][0, position].tolist(),
                             expert_weights=acts[f"blocks.{i}.mlp.hook_expert_weights"][0, position].float().tolist())
            mod = f"layers.{i}.{module}".replace(" + ", f" + layers.{i}.") if module else ""
            if kind.startswith("resid_"):
                before, stream = stream, vec
                add(kind, i, f"blocks.{i}.{hook}", mod, vec, stream, before, **extra)
            else:
                add(kind, i, f"blocks.{i}.{hook}", mod, vec, stream, **extra)
    # the logit lens of every residual row at once: one (R, H) x (H, V) product through the final norm and head
    residual = [i for i, r in enumerate(rows) if r["kind"] in RESIDUAL_KINDS]
    lensed = lens_logits(model, torch.stack([rows[i]["_stream"] for i in residual])).double()  # (R, V)
    for i, (ids, probs, rank) in zip(residual, _top(lensed, final_id, top)):
        rows[i].update(top_ids=ids, top_probs=probs, rank_final=rank)
    add("ln_final", -1, "ln_final.hook_normalized", "norm", acts["ln_final.hook_normalized"][0, position], stream)
    logits = out.logits[0, position].double()  # (V,) soft-capped as the model does
    ids, probs, rank = _top(logits[None], final_id, top)[0]
    rows.append(dict(kind="logits", layer=-1, hook="logits", module="lm_head", norm=_norm(logits),
                     resid_norm=_norm(stream), delta_ratio=np.nan, cosine=np.nan, top_ids=ids, top_probs=probs,
                     rank_final=rank, keys=[], key_weights=[], experts=[], expert_weights=[]))
    frame = pd.DataFrame([{k: v for k, v in r.items() if k != "_stream"} for r in rows])
    frame.insert(0, "step", np.arange(len(frame)))
    return frame


def _top(logits: torch.Tensor, final_id: int, k: int) -> list[tuple[list[int], list[float], int]]:
    """Per row of ``logits`` ``(R, V)``: the ``k`` most likely ids of its softmax, their probabilities, and the rank
    of ``final_id`` (how many ids score strictly higher)."""
    p, ids = torch.softmax(logits, -1).topk(min(k, logits.shape[-1]), dim=-1)  # (R, k) each
    rank = (logits > logits[:, final_id:final_id + 1]).to(torch.int32).sum(-1)  # (R,)
    return list(zip(ids.tolist(), p.tolist(), rank.tolist()))


def _top_keys(pattern: torch.Tensor, k: int) -> dict:
    """``pattern`` ``[n_heads, S]`` (one query row of every head) -> the ``k`` keys with the highest weight averaged
    over heads. Without a KV cache, key column j is position j (a sliding layer's row is as long as the full one)."""
    mean = pattern.double().mean(0)  # (S,)
    w, keys = mean.topk(min(k, int((mean > 0).sum()) or 1))
    return dict(keys=keys.tolist(), key_weights=w.tolist())


def first_top_step(steps: pd.DataFrame) -> int:
    """The first step from which the model's own prediction stays the lens's top token on every later residual row
    (the ``logits`` row included): the sub-step at which the answer appears."""
    res = steps[steps["rank_final"] >= 0]
    top = (res["rank_final"] == 0).to_numpy()
    d = len(top)
    while d > 0 and top[d - 1]:
        d -= 1
    return int(res["step"].iloc[min(d, len(top) - 1)])


# ---- direct logit attribution ---------------------------------------------------------------------------------------
@dataclass
class Attribution:
    """The split of one logit (or a logit difference) into the residual stream's terms.

    ``table``: columns ``component`` (``embed``, ``pos_embed``, ``attn``, ``mlp``, ``attn_bias``, ``head``,
    ``norm_bias``), ``layer`` (0-based, -1 outside the blocks), ``head`` (0-based, -1 unless a head), and
    ``contribution``. Without heads the rows of ``embed``, ``pos_embed``, ``attn``, ``mlp`` and ``norm_bias`` add up
    to ``logit``; with heads, each layer's ``attn`` row is the sum of its ``head`` rows and its ``attn_bias`` row.
    ``scale``: the frozen factor of the final norm at this position (``1 / rms(x_L)``, or ``1 / std`` for LayerNorm).
    ``logit``: what the head computes for the direction (``W_U[t] . norm(x_L)``, before a soft cap).
    ``softcap``: the final soft cap that was left out (None when the model has none).
    """

    table: pd.DataFrame
    scale: float
    logit: float
    softcap: float | None


def attribution_defined(norm_position: str) -> bool:
    """Whether the stream the final norm reads is a plain sum of the sub-layers' outputs (not under Post-Norm)."""
    return norm_position != "post"


def heads_split(norm_position: str) -> bool:
    """Whether attention's contribution splits into heads (Pre-Norm only: no norm after attention)."""
    return norm_position == "pre"


@torch.no_grad()
def logit_attribution(model: CausalLM, out: CausalLMOutput, position: int, token: int, other: int | None = None,
                      by_head: bool = False) -> Attribution:
    """Direct logit attribution of ``token``'s logit (minus ``other``'s, when given) at ``position``.

    Raises:
        ValueError: Post-Norm (no linear decomposition, see the module docstring), or per-head shares asked for a
            placement with a norm after attention.
    """
    cfg, acts = model.config, out.activations
    if not attribution_defined(cfg.norm_position):
        raise ValueError("direct logit attribution needs the residual stream to be a sum (not Post-Norm)")
    if by_head and not heads_split(cfg.norm_position):
        raise ValueError("attention splits into heads only under Pre-Norm (a norm after attention is not linear)")
    W_U = model.lm_head.weight  # (V, H)
    direction = W_U[token].double() - (W_U[other].double() if other is not None else 0.0)  # (H,): the head's row(s)
    x = acts[f"blocks.{cfg.num_hidden_layers - 1}.hook_resid_post"][0, position].double()  # (H,) what the norm reads
    norm = model.norm
    layer_norm = cfg.norm_type == "layernorm"
    gain = norm.weight.double() + (1.0 if cfg.norm_type == "gemma_rmsnorm" else 0.0)  # (H,)
    if layer_norm:
        scale = float(torch.rsqrt(x.var(correction=0) + norm.eps))  # 1 / std, frozen
    else:
        scale = float(torch.rsqrt(x.pow(2).mean() + norm.eps))  # 1 / rms, frozen
    read = direction * gain * scale  # (H,): the direction one unit of the stream is read along, norm frozen

    def share(term: torch.Tensor) -> float:  # term (H,) -> its part of the logit
        term = term.double()
        if layer_norm:
            term = term - term.mean()  # centring is linear: each term centred on its own
        return float(torch.dot(read, term))

    rows = [("embed", -1, -1, share(acts["hook_embed"][0, position]))]
    if "hook_pos_embed" in acts:
        rows.append(("pos_embed", -1, -1, share(acts["hook_pos_embed"][0, position])))
    for i, block in enumerate(model.layers):
        if by_head:
            attn = block.self_attn
            z = acts[f"blocks.{i}.attn.hook_z"][0, position].double()  # (nh, hd)
            W_O = attn.o_proj.weight.double().view(-1, attn.n_heads, attn.head_dim)  # (H, nh, hd)
            per_head = torch.einsum("hnd,nd->nh", W_O, z)  # (nh, H): head n's write into the stream
            heads = [share(per_head[n]) for n in range(attn.n_heads)]
            bias = share(attn.o_proj.bias) if attn.o_proj.bias is not None else 0.0
            rows += [("head", i, n, c) for n, c in enumerate(heads)] + [("attn_bias", i, -1, bias)]
        rows.append(("attn", i, -1, share(acts[f"blocks.{i}.hook_attn_out"][0, position])))
        rows.append(("mlp", i, -1, share(acts[f"blocks.{i}.hook_mlp_out"][0, position])))
    if layer_norm:
        rows.append(("norm_bias", -1, -1, float(torch.dot(direction, norm.bias.double()))))
    logit = float(torch.dot(direction, acts["ln_final.hook_normalized"][0, position].double()))
    table = pd.DataFrame(rows, columns=["component", "layer", "head", "contribution"])
    return Attribution(table, scale, logit, cfg.final_logit_softcapping)


def summed(attr: Attribution) -> float:
    """The sum of the terms that make up the logit (heads and their bias rows counted once, through ``attn``)."""
    t = attr.table
    return float(t.loc[~t["component"].isin(("head", "attn_bias")), "contribution"].sum())


def capped(logit: float, cap: float | None) -> float:
    """The logit after the model's final soft cap (the identity without one)."""
    return float(soft_cap(torch.tensor(logit, dtype=torch.float64), cap))
