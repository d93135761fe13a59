"""SmolLM2-135M-Instruct in the app: its first conversion from the GGUF file, with a progress bar.

The engine side is :mod:`engine.checkpoints_gguf`; this module only turns its ``progress(done, total, stage)``
calls into one Streamlit progress bar.
"""

from __future__ import annotations

import streamlit as st

from engine.checkpoints_gguf import GGUF_MODELS, cache_ready, ensure_converted, gguf_model_available
from ui.i18n import t

# Share of the bar each conversion stage fills (measured: reading the file's metadata is the slow part).
STAGE_SPANS = {"read": (0.0, 0.45), "tensors": (0.45, 0.75), "tokenizer": (0.75, 0.8), "write": (0.8, 0.92),
               "verify": (0.92, 1.0)}


def named_models() -> list[str]:
    """Names of the GGUF-packaged models installed here (``["smollm2-135m"]`` after the README install)."""
    return [name for name in GGUF_MODELS if gguf_model_available(name)]


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
