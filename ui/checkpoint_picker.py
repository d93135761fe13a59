"""The model source (random init, trained in this session, a checkpoint) and the checkpoint picker."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import CausalLM, ModelConfig
from engine.checkpoints import GGUF_MODELS, CheckpointError, default_models_dir
from engine.checkpoints.poem import is_poem_model
from engine.tokenizer import TextTokenizer
from ui.caches import checkpoint_menu, load_checkpoint, named_models, shipped_metrics
from ui.escape import md
from ui.i18n import labeler, t
from ui.poem_model import learned_caption, poem_label
from ui.smollm2 import model_label, prepare_with_progress
from ui.state import CHECKED_KEY, add_message, translated_choice, unlink

SOURCES = ("random", "trained", "checkpoint")
# session_state: {"model": CausalLM, "id": str, "source": the model key it was trained from} set by the Train page
TRAINED_KEY = "train.trained"


def source_widgets() -> str:
    """Model source picker; returns "random", "trained" or "checkpoint".

    The source and the checkpoint are in the link by their ids (``model.source=checkpoint&model.checkpoint=
    smollm2-135m``), so a link opens the same model. A model trained in a session has no id another browser
    could load: a link asking for one is told so and opens the random-init model.
    """
    _trained_link()
    source = translated_choice(st.sidebar.radio, t("model.source.label"), "model.source", "random", list(SOURCES),
                               labeler("model.source."), url=True)
    if source != "checkpoint":
        unlink("model.checkpoint")  # the picker is not drawn: a link of this view names no checkpoint
    if source == "trained" and TRAINED_KEY not in st.session_state:
        st.sidebar.info(t("model.no_trained"))
        return "random"
    return source


def _trained_link() -> None:
    """Once per session: a link naming the source "trained" (made while a trained model was shown) opens in a
    session that has none; say why, drop it from the address bar and rerun (the message box is drawn above)."""
    checked = st.session_state.setdefault(CHECKED_KEY, set())
    if "model.source" in checked or st.query_params.get_all("model.source") != ["trained"]:
        return
    if TRAINED_KEY in st.session_state:
        return
    checked.add("model.source")
    add_message(t("model.trained_link"))
    del st.query_params["model.source"]
    st.rerun()


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
    named = named_models()  # packaged models (SmolLM2 from its pip package, the Tang-poem model), listed first
    if not infos and not named:
        st.sidebar.warning(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.info(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.stop()
    names = named + [c.name for c in infos]
    sizes = {c.name: c.size_bytes for c in infos}
    # In the link by its name, always (not only when it differs from the first entry): the list differs between
    # servers and grows. A name this server does not list is named in the sidebar message and dropped from the
    # link, and the first entry is shown; it is only ever compared with the listed names, never used as a path.
    name = translated_choice(st.sidebar.selectbox, t("model.checkpoint.label"), "model.checkpoint", names[0], names,
                             lambda n: (poem_label(n) if is_poem_model(n) else model_label(n)) if n in named
                             else f"{n} ({sizes[n] / 2**20:.0f} MB)",
                             url=True, always_linked=True)
    try:
        if name in GGUF_MODELS:
            prepare_with_progress(name)  # first use: convert the GGUF file once, with a progress bar
        with st.spinner(t("model.loading", name=name)):
            model, tok = load_checkpoint(name)
    except (CheckpointError, OSError, ValueError) as err:
        st.error(t("model.load_failed", name=name, error=str(err)))
        st.stop()
    if is_poem_model(name):
        st.sidebar.caption(learned_caption(shipped_metrics(name)))
    if tok is not None and tok.vocab_size > model.config.vocab_size:  # ids past V would index outside the embedding
        st.sidebar.warning(t("model.tok_larger", tok=f"{tok.vocab_size:,}", v=f"{model.config.vocab_size:,}",
                             last=f"{model.config.vocab_size - 1:,}"))
    return model, tok, f"checkpoint:{name}"
