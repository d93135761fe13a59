"""The model source (random init, trained in this session, a checkpoint) and the checkpoint picker."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import CausalLM, ModelConfig
from engine.checkpoints import CheckpointError, default_models_dir
from engine.tokenizer import TextTokenizer
from ui.caches import checkpoint_menu, load_checkpoint, named_models
from ui.escape import md
from ui.i18n import labeler, t
from ui.smollm2 import model_label, prepare_with_progress
from ui.state import control, translated_choice

SOURCES = ("random", "trained", "checkpoint")
TRAINED_KEY = "train.trained"  # session_state: {"model": CausalLM, "id": str} set by the Train page


def source_widgets() -> str:
    """Model source picker; returns "random", "trained" or "checkpoint"."""
    source = translated_choice(st.sidebar.radio, t("model.source.label"), "model.source", "random", list(SOURCES),
                               labeler("model.source."))
    if source == "trained" and TRAINED_KEY not in st.session_state:
        st.sidebar.info(t("model.no_trained"))
        return "random"
    return source


def readonly_config(config: ModelConfig) -> None:
    """The loaded model's configuration, shown where the sliders were (read-only)."""
    st.sidebar.caption(t("model.readonly"))
    fields = config.to_dict()  # Hugging Face names: shown as they are, like code; the headers are translated
    rows = pd.DataFrame({t("model.readonly.field"): list(fields), t("model.readonly.value"): [str(v) for v in fields.values()]})
    st.sidebar.dataframe(rows, hide_index=True, width="stretch", height=260)


def checkpoint_model(notes: list[str]) -> tuple[CausalLM, TextTokenizer | None, str]:
    infos, refused = checkpoint_menu()
    for name, key, fields in refused:  # said, not offered as a broken entry
        st.sidebar.warning(t(key, name=md(name), **{k: md(v) for k, v in fields.items()}))
    named = named_models()  # models shipped in pip packages (SmolLM2), listed first
    if not infos and not named:
        st.sidebar.warning(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.info(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.stop()
    names = named + [c.name for c in infos]
    sizes = {c.name: c.size_bytes for c in infos}
    if st.session_state.get("model.checkpoint", names[0]) not in names:  # a listed folder went away
        st.session_state["model.checkpoint"] = names[0]
    name = control(st.sidebar.selectbox, t("model.checkpoint.label"), "model.checkpoint", names[0], kind="choice",
                   options=names,
                   format_func=lambda n: model_label(n) if n in named else f"{n} ({sizes[n] / 2**20:.0f} MB)")
    try:
        if name in named:
            prepare_with_progress(name)  # first use: convert the GGUF file once, with a progress bar
        with st.spinner(t("model.loading", name=name)):
            model, tok = load_checkpoint(name)
    except (CheckpointError, OSError, ValueError) as err:
        st.error(t("model.load_failed", name=name, error=str(err)))
        st.stop()
    if tok is not None and tok.vocab_size > model.config.vocab_size:  # ids past V would index outside the embedding
        st.sidebar.warning(t("model.tok_larger", tok=f"{tok.vocab_size:,}", v=f"{model.config.vocab_size:,}",
                             last=f"{model.config.vocab_size - 1:,}"))
    return model, tok, f"checkpoint:{name}"
