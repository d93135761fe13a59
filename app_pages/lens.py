"""Logit lens & tokenizers: the raw logit lens (every depth read through the final norm and LM head) as a
depth x position heatmap, and the sidebar text under the bundled BPE and SmolLM2's byte-level BPE.

Depths are 0 = embedding, i = after block i; positions are 0-based.
"""

import numpy as np
import pandas as pd
import streamlit as st

from analysis import lens
from analysis.tokenizers import compare, tokenize
from engine.tokenizer import TextTokenizer
from ui.examples import language_notice
from ui.caches.views import lens_table, pretrained_tokenizer
from ui.controls import index_slider, window_slider
from ui.figures.lens import lens_heatmap
from ui.figures.tokenizers import token_chips_html, tokens_bar
from ui.i18n import t
from ui.presenter import pairs
from ui.sidebar import explorer, tokenizer_for, trace
from ui.tokens import label, phrase
from ui.widgets import chart, explain, first_screen, real_model_notice, revealed
from ui.window import rows_that_fit

WINDOW = 20  # positions per lens heatmap (per-cell token text stays readable on a projector)
DEPTHS_PX = 860  # the heatmap's plot height at its tallest outside presenter mode (ui/figures/lens.py)
CHIPS_MAX = 400  # tokens drawn as chips per tokenizer
SMOLLM2 = "smollm2-135m"


def _prob(p: float) -> str:
    """A probability as text; below 1e-6 as "< 1e-6" (float32 underflows to 0 long before that matters)."""
    return f"{p:.3g}" if p >= 1e-6 else "< 1e-6"


ctx = explorer()
with first_screen(t("lens.title"), t("lens.explain")):
    real_model_notice(ctx.source)
    language_notice(ctx)

    L, T = ctx.config.num_hidden_layers, int(ctx.input_ids.shape[1])
    out = trace(ctx)
    bar = st.progress(0.0, text=t("lens.progress", depths=L + 1, positions=T))
    table = lens_table(ctx.model, tuple(ctx.input_ids[0].tolist()),
                       lambda f: bar.progress(f, text=t("lens.progress", depths=L + 1, positions=T)))
    bar.empty()

    # the one display rule: a prediction at position p is labelled as the token that would follow the input up to p
    input_ids = ctx.input_ids[0].tolist()
    labels, named = {}, {}
    for p, g in table.groupby("position"):
        shown = sorted(set(g["top_id"]) | set(g["final_id"]))
        pieces = ctx.pieces_after(input_ids[:p + 1], shown)
        labels.update({(p, i): label(x) for i, x in zip(shown, pieces)})
        named.update({(p, i): x for i, x in zip(shown, pieces)})
    input_labels = ctx.tokens
    depth_labels = [t("lens.embed")] + [t("lens.block", n=i) for i in range(1, L + 1)]
    start = 0
    c1, c2 = pairs("lens.windows").columns(2)  # one row: the first screen has no line to spare
    if T > WINDOW:
        start = index_slider(t("lens.window"), 0, T - WINDOW, "lens.start", default=T - WINDOW,
                             help=t("lens.window_help", n=WINDOW), container=c1)
    stop = min(T, start + WINDOW)
    # the depths drawn: as many as fit the chart at a readable row height, the deepest first (a slider moves them)
    d0, d1 = window_slider(t("lens.depth_window"), L + 1, "lens.depth_start", DEPTHS_PX, "lens.heatmap",
                           help=t("lens.depth_window_help", n=rows_that_fit(DEPTHS_PX)), container=c2)
    st.caption(t("lens.shown", d0=d0, d1=d1 - 1, L=L, first=depth_labels[d0], last=depth_labels[d1 - 1],
                 p0=start, p1=stop - 1, T=T - 1))
    shown = table[table["position"].between(start, stop - 1) & table["depth"].between(d0, d1 - 1)].copy()
    shown["depth"] -= d0  # the figure's rows are the window's
    pos_labels = [f"{p} {input_labels[p]}" for p in range(start, stop)]
    fig = lens_heatmap(shown, labels, depth_labels[d0:d1], pos_labels, t("lens.chart_title"), t("lens.x"), t("lens.y"),
                       t("lens.unit"), t("lens.hover"), first=(d0, start))
    data = pd.DataFrame({
        t("lens.col.depth"): [depth_labels[d] for d in table["depth"]], t("lens.col.position"): table["position"],
        t("lens.col.input"): [input_labels[p] for p in table["position"]],
        t("lens.col.top"): [labels[k] for k in zip(table["position"], table["top_id"])],
        t("lens.col.top_prob"): table["top_prob"],
        t("lens.col.final"): [labels[k] for k in zip(table["position"], table["final_id"])],
        t("lens.col.p_final"): table["p_final"],
        t("lens.col.rank_final"): table["rank_final"],
    })
    chart(fig, data, "lens.heatmap", fill_screen=True)
st.caption(t("lens.whitespace"))

first = lens.first_top_depth(table)
last = table[table["position"] == T - 1].sort_values("depth")
d_last = int(first.loc[first["position"] == T - 1, "depth"].iloc[0])
if revealed("lens.heatmap"):  # the sentences and the table wait for a lesson's answer
    st.markdown(t("lens.last_sentence", tok=phrase(ctx.pieces[T - 1]),
                  final=phrase(named[T - 1, int(last["final_id"].iloc[-1])]), p=_prob(last["p_final"].iloc[-1]),
                  depth=depth_labels[d_last], p0=_prob(last["p_final"].iloc[0])))
    st.markdown(t("lens.median_sentence", positions=T, median=f"{float(np.median(first['depth'])):g}", L=L))
    with st.expander(t("lens.table_title")):
        st.dataframe(data, hide_index=True, width="stretch")

# ---- tokenizer comparison ----
st.header(t("tokcmp.title"))
explain(t("tokcmp.explain"))
if ctx.tokenizer is None:
    st.info(t("tokcmp.random_mode"))
    st.stop()
text = st.session_state.get("input.text", "")
vocab = int(st.session_state.get("cfg.vocab_size", 4000))
bundled = tokenizer_for(vocab)
toks: dict[str, TextTokenizer] = {t("tokcmp.bundled", v=bundled.vocab_size): bundled}
smol, why = pretrained_tokenizer(SMOLLM2)
if smol is not None:
    toks[t("tokcmp.smollm2", v=smol.vocab_size)] = smol
else:
    st.info(t("tokcmp.missing", error=why))
if ctx.source == "checkpoint" and ctx.tokenizer is not None and (smol is None or ctx.tokenizer.tokenizer.to_str() != smol.tokenizer.to_str()):
    toks[t("tokcmp.model", name=ctx.tokenizer.name, v=ctx.tokenizer.vocab_size)] = ctx.tokenizer
tables = {name: tokenize(tok, text) for name, tok in toks.items()}
summary = compare(tables, text)
n_bytes, n_chars = len(text.encode("utf-8")), len(text)
fig = tokens_bar(summary, t("tokcmp.chart_title", bytes=n_bytes, chars=n_chars), t("tokcmp.x"), t("tokcmp.tokens"),
                 t("tokcmp.bpt"))
summary_df = summary.rename(columns={c: t(f"tokcmp.col.{c}") for c in summary.columns})
chart(fig, summary_df, "tokcmp.bar")
for r in summary.itertuples(index=False):
    st.markdown(t("tokcmp.sentence", name=r.tokenizer, tokens=r.tokens, bpt=f"{r.bytes_per_token:.2f}",
                  chars=f"{r.chars_per_token:.2f}", partial=r.partial, unknown=r.unknown))
for name, df in tables.items():
    st.subheader(t("tokcmp.tokens_of", name=name))
    if len(df) > CHIPS_MAX:
        st.caption(t("tokcmp.capped", n=CHIPS_MAX, total=len(df)))
    st.html(token_chips_html(df, t("tokcmp.chip_hover"), CHIPS_MAX))
    with st.expander(t("tokcmp.table", name=name)):
        st.dataframe(df.rename(columns={c: t(f"tokcmp.col.{c}") for c in df.columns}), hide_index=True, width="stretch")
