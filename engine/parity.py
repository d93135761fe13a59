"""Is this model computing what it should? Two checks the app's parity badge shows, in logit units.

1. :func:`attention_paths_agree`: the same input through the explicit-softmax attention (eager, the reference that
   draws the heatmaps) and through ``F.scaled_dot_product_attention``: two independent implementations of the
   same formula must give the same logits up to float32 rounding.
2. :func:`reference_check`: our logits against numbers computed by transformers' own GGUF loader
   (``AutoModelForCausalLM.from_pretrained(folder, gguf_file=..., attn_implementation="eager")``) for fixed
   prompts, stored in ``engine/data/smollm2_reference.json`` (written and checked by ``tests/engine/test_smollm2_parity.py``).
   The file keeps, per position, the 10 largest logits and every 256th vocabulary entry.

Agreement is judged relative to the logit scale: ``max |Δlogit| <= PARITY_RTOL * max |logit|``.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

__all__ = ["PARITY_RTOL", "REFERENCE_FILE", "load_reference", "attention_paths_agree", "reference_check"]

PARITY_RTOL = 1e-4
REFERENCE_FILE = Path(__file__).resolve().parent / "data" / "smollm2_reference.json"


def load_reference(path: str | Path = REFERENCE_FILE) -> dict:
    """The stored reference: ``{"model", "source", "vocab_stride", "prompts": [{"text", "ids", "columns",
    "logits" [T][len(columns)], "top_ids" [T][k], "top_logits" [T][k]}]}``."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


@torch.no_grad()
def attention_paths_agree(model, input_ids: torch.Tensor, eager_logits: torch.Tensor | None = None) -> dict:
    """Max |Δlogit| between the eager (explicit softmax) and the SDPA attention path on ``input_ids`` ``[1, T]``.

    ``eager_logits`` (``[1, T, V]``, e.g. from a cached forward with ``output_attentions=True``) saves one forward.
    Returns ``{"max_abs_diff", "scale" (max |eager logit|), "ok"}``.
    """
    if eager_logits is None:
        eager_logits = model(input_ids, output_attentions=True).logits  # (1, T, V): explicit softmax
    sdpa_logits = model(input_ids).logits  # (1, T, V): F.scaled_dot_product_attention
    diff = float((eager_logits.double() - sdpa_logits.double()).abs().max())
    scale = float(eager_logits.abs().max())
    return {"max_abs_diff": diff, "scale": scale, "ok": diff <= PARITY_RTOL * max(scale, 1.0)}


@torch.no_grad()
def reference_check(model, reference: dict | None = None) -> list[dict]:
    """Our logits on each stored prompt against the stored transformers numbers.

    Returns one dict per prompt: ``{"text", "ids", "n_tokens", "max_abs_diff", "scale", "ok", "same_top1"}`` where the
    difference is taken over every stored entry (top-10 and strided columns, all positions).
    """
    reference = reference if reference is not None else load_reference()
    rows = []
    for p in reference["prompts"]:
        ids = torch.tensor([p["ids"]])  # (1, T)
        logits = model(ids).logits[0].double()  # (T, V)
        cols = torch.tensor(p["columns"])  # (C,)
        ref_cols = torch.tensor(p["logits"], dtype=torch.float64)  # (T, C)
        top_ids = torch.tensor(p["top_ids"])  # (T, k)
        ref_top = torch.tensor(p["top_logits"], dtype=torch.float64)  # (T, k)
        d_cols = (logits[:, cols] - ref_cols).abs().max()
        d_top = (logits.gather(1, top_ids) - ref_top).abs().max()
        diff = float(torch.maximum(d_cols, d_top))
        scale = float(ref_top.abs().max().clamp_min(ref_cols.abs().max()))
        rows.append({"text": p["text"], "ids": list(p["ids"]), "n_tokens": len(p["ids"]), "max_abs_diff": diff, "scale": scale,
                     "ok": diff <= PARITY_RTOL * max(scale, 1.0),
                     "same_top1": bool((logits.argmax(-1) == top_ids[:, 0]).all())})
    return rows
