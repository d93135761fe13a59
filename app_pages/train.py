"""Training lab: train a copy of the sidebar model on the bundled corpus, live, and race Pre-Norm against
Post-Norm from the same weights. This script only wires the two sections: the trainer is ``ui/train_panel.py``,
the race ``ui/race_panel.py``, what they share ``ui/train_common.py``.

Runs and races are background jobs held in this browser session's ``st.session_state`` (``server.jobs``). When a run
ends, the trained model is handed to the sidebar (``st.session_state["train.trained"]``) and the model source
switches to "trained in this session", so every page shows it. The trained model belongs to this session only.
"""

import streamlit as st

from ui.caches.training import corpus_ids
from ui.state import control, set_controls
from ui.i18n import t
from server.jobs import prepare
from ui.race_panel import race_view
from ui.sidebar import explorer
from ui.train_common import CORPORA, publish_finished_job
from ui.train_panel import lab_view
from ui.compare import one_side_note
from ui.widgets import first_screen

prepare()  # the runs' fork server starts in the background on the first visit (server/jobs.py)
publish_finished_job()  # before explorer(), so the sidebar offers a model whose run just ended
ctx = explorer()
with first_screen(t("train.title"), t("train.explain")):  # the live charts fill what the controls leave
    one_side_note()
    if ctx.source == "checkpoint":
        st.info(t("train.checkpoint"))
        st.button(t("train.use_sliders"), key="train.use_sliders", on_click=set_controls,
                  args=({"model.source": "random"},), type="primary", icon=":material/model_training:")
        n_params = ctx.model.num_parameters()
        st.caption(t("train.checkpoint_cost", params=f"{n_params / 1e6:.1f} M", weights=f"{4 * n_params / 2**30:.2f}",
                     extra=f"{12 * n_params / 2**30:.1f}", layers=ctx.config.num_hidden_layers))
        st.stop()

    c1, c2 = st.columns([2, 1])
    if st.session_state.get("train.corpus", "zh") not in CORPORA:
        st.session_state["train.corpus"] = "zh"
    corpus = control(c1.segmented_control, t("train.corpus.label"), "train.corpus", "zh", kind="choice",
                     options=CORPORA, format_func=lambda c: t(f"train.corpus.{c}"), bind=False, required=True,
                     help=t("train.corpus.help")) or "zh"
    if st.session_state.get("train.view", "lab") not in ("lab", "race"):
        st.session_state["train.view"] = "lab"
    view = control(c2.segmented_control, t("train.view.label"), "train.view", "lab", kind="choice",
                   options=["lab", "race"], format_func=lambda v: t(f"train.view.{v}"), bind=False, required=True) or "lab"

    V = ctx.config.vocab_size
    with st.spinner(t("train.encoding", corpus=t(f"train.corpus.{corpus}"), size=V)):
        ids = corpus_ids(V, corpus)
    st.caption(t("train.corpus_tokens", n=f"{len(ids):,}", corpus=t(f"train.corpus.{corpus}"), size=V))

    (race_view if view == "race" else lab_view)(ctx, ids, corpus)
