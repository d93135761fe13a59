"""Overview: parameter breakdown with tying savings, and a block walked through step by step."""

import streamlit as st

from engine import analysis
from ui.figures.overview import parameter_bar
from ui.i18n import t
from ui.sidebar import explorer
from ui.widgets import chart, explain

ctx = explorer()
st.title(t("overview.title"))
explain(t("overview.explain"))

# ---- parameters ----
params = analysis.parameter_table(ctx.model)
total = int(params["params"].sum())
fig = parameter_bar(params, t("overview.params_title", total=f"{total:,}"), t("overview.params_x"), t("overview.params_y"))
chart(fig, params, "overview.params")
saved = analysis.tying_savings(ctx.config)
if ctx.config.tie_word_embeddings:
    st.success(t("overview.tying_saved", saved=f"{saved:,}", v=ctx.config.vocab_size, h=ctx.config.hidden_size))
else:
    st.caption(t("overview.tying_off", saved=f"{ctx.config.vocab_size * ctx.config.hidden_size:,}"))

# ---- shape walkthrough ----
L = ctx.config.num_hidden_layers
layer = st.slider(t("overview.layer"), 1, L, 1, key="overview.layer") if L > 1 else 1
walk = analysis.shape_walkthrough(ctx.model, ctx.input_ids, layer=layer - 1)
st.subheader(t("overview.shape_title", layer=layer, n=ctx.input_ids.shape[1]))
st.caption(t("overview.shape_explain"))
st.dataframe(
    walk.rename(columns={c: t(f"overview.col.{c}") for c in walk.columns}),
    hide_index=True, width="stretch",
)
with st.expander(t("overview.config")):
    st.code(ctx.config.to_json(), language="json")
