"""SmolLM2-135M-Instruct in the app: its first conversion from the GGUF file (with a progress bar) and its
parity badge.

The engine side is :mod:`engine.checkpoints.smollm2` (conversion) and :mod:`engine.parity` (the two checks); this
module turns their results into Streamlit elements.
"""

from __future__ import annotations

import streamlit as st
import torch

from engine.checkpoints import GGUF_MODELS, cache_ready, ensure_converted
from engine.parity import PARITY_RTOL
from ui.caches.views import attention_paths, reference_rows
from ui.format import DASH, number
from ui.i18n import t

# Share of the bar each conversion stage fills (measured: reading the file's metadata is the slow part).
STAGE_SPANS = {"read": (0.0, 0.45), "tensors": (0.45, 0.75), "tokenizer": (0.75, 0.8), "write": (0.8, 0.92),
               "verify": (0.92, 1.0)}


def model_label(name: str) -> str:
    """Display name in the checkpoint picker."""
    return GGUF_MODELS[name].title


def prepare_with_progress(name: str) -> None:
    """Convert a named model into its cache if needed, showing a progress bar (tens of seconds, once per machine).

    Raises:
        engine.checkpoints.CheckpointError: the conversion failed (the caller shows the message).
    """
    if cache_ready(name):
        return
    bar = st.progress(0.0, text=t("smollm2.stage.verify", done=0, total=1))

    def report(done: int, total: int, stage: str) -> None:
        lo, hi = STAGE_SPANS[stage]
        bar.progress(min(1.0, lo + (hi - lo) * done / max(total, 1)), text=t(f"smollm2.stage.{stage}", done=done,
                                                                              total=total))

    try:
        ensure_converted(name, progress=report)
    finally:
        bar.empty()


# ---- the parity badge ----------------------------------------------------------------------------------------
def _share(diff: float, scale: float) -> str:
    return number(diff / scale, ".1e") if scale > 0 else DASH


def parity_badge(ctx, eager_logits: torch.Tensor) -> None:
    """Green or red: does SmolLM2 compute what it should on this text? Shown only for a named GGUF model.

    Two checks (see :mod:`engine.parity`): the text on screen through the explicit-softmax attention (the cached
    trace's logits, ``eager_logits`` ``[1, T, V]``) against PyTorch's fused SDPA; and the stored prompts against
    transformers' numbers shipped with the tests.
    """
    name = ctx.model_key.removeprefix("checkpoint:")
    if not ctx.model_key.startswith("checkpoint:") or name not in GGUF_MODELS:
        return
    ids = tuple(ctx.input_ids[0].tolist())
    with st.spinner(t("smollm2.badge.computing")):
        paths = attention_paths(ctx.model, ids, eager_logits)
        rows = reference_rows(ctx.model)
    ref_diff = max(r["max_abs_diff"] for r in rows)
    ref_scale = max(r["scale"] for r in rows)
    ok = paths["ok"] and all(r["ok"] and r["same_top1"] for r in rows)
    worst = max(paths["max_abs_diff"], ref_diff)
    with st.container(border=True):
        # No icon: Streamlit fetches a Material icon's SVG from fonts.gstatic.com, and the app stays offline.
        st.badge(("✓ " if ok else "✗ ") + t("smollm2.badge.ok" if ok else "smollm2.badge.bad", diff=f"{worst:.1e}"),
                 color="green" if ok else "red")
        st.markdown(t("smollm2.badge.paths", n=len(ids), diff=f"{paths['max_abs_diff']:.1e}",
                      share=_share(paths["max_abs_diff"], paths["scale"]), scale=f"{paths['scale']:.1f}"))
        same = [r for r in rows if tuple(r.get("ids", ())) == ids]
        st.markdown(t("smollm2.badge.reference", n=len(rows), tokens=sum(r["n_tokens"] for r in rows),
                      diff=f"{ref_diff:.1e}", share=_share(ref_diff, ref_scale),
                      top1=t("smollm2.badge.yes" if all(r["same_top1"] for r in rows) else "smollm2.badge.no")))
        if same:
            st.caption(t("smollm2.badge.same_text", diff=f"{same[0]['max_abs_diff']:.1e}"))
        st.caption(t("smollm2.badge.rule", rtol=f"{PARITY_RTOL:.0e}"))
