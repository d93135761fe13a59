"""Next token: the top-k next-token distribution at any position, temperature, and a short continuation.

Positions are 0-based (as on the axes of the other pages): position t's logits predict token t+1.
"""

import streamlit as st
import torch

import analysis
from ui.examples import language_notice
from ui.caches.views import continuation
from ui.controls import index_slider
from ui.figures.next_token import topk_bar
from ui.format import percent
from ui.i18n import t
from ui.sidebar import explorer, trace
from ui.state import control
from ui.widgets import chart, first_screen
from ui.escape import html_text, md_code
from ui.tokens import phrase, text

K_MAX = 20
NEW_TOKENS_MAX = 32


ctx = explorer()
with first_screen(t("next.title"), t("next.explain")):
    language_notice(ctx)

    out = trace(ctx)
    T = int(ctx.input_ids.shape[1])
    V = ctx.config.vocab_size
    ids = ctx.input_ids[0].tolist()
    labels = ctx.tick_labels()

    # ---- where and how ----
    prev_T = st.session_state.get("next._T")  # follow the end of the input while the slider sits on the last token
    if prev_T is not None and prev_T != T and st.session_state.get("next.position") == prev_T - 1:
        st.session_state["next.position"] = T - 1
    st.session_state["next._T"] = T
    c1, c2, c3 = st.columns(3)  # one row of controls: the chart starts high on a projector
    pos = index_slider(t("next.position"), 0, T - 1, "next.position", default=T - 1, container=c1,
                       help=t("next.position_help"))
    k = index_slider(t("next.k"), 1, min(K_MAX, V), "next.k", default=10, container=c2, bind=False)
    temperature = float(control(c3.slider, t("next.temperature"), "next.temperature", 1.0, kind="float", lo=0.1, hi=3.0,
                                step=0.1, bind=False, help=t("next.temperature_explain")))

    # ---- the distribution ----
    pieces = ctx.pieces
    st.subheader(t("next.dist_title", pos=pos, tok=phrase(pieces[pos])))
    logits = out.logits[0, pos]  # (V,)
    df = analysis.next_token_table(logits, lambda c: ctx.strings_after(ids[:pos + 1], c), k=k, temperature=temperature)
    fig = topk_bar(df, t("next.chart_title", k=len(df), pos=pos, temp=f"{temperature:.1f}"), t("next.x"), t("next.y"))
    chart(fig, df, "next.topk", fill_screen=True)
st.caption(t("next.temperature_explain"))
mass = float(df["probability"].sum())
st.caption(t("next.mass", k=len(df), mass=percent(mass), v=V, uniform=percent(1 / V)))
if pos < T - 1:
    target = ids[pos + 1]
    p, rank = analysis.token_probability(logits, target, temperature)
    st.caption(t("next.actual", tok=phrase(pieces[pos + 1]), p=f"{p:.3%}", rank=rank, v=V))

# ---- a short continuation ----
st.subheader(t("next.gen_title"))
g1, g2 = st.columns(2)
n_new = index_slider(t("next.new_tokens"), 1, NEW_TOKENS_MAX, "next.new_tokens", default=16, container=g1, bind=False)
greedy = control(g2.toggle, t("next.greedy"), "next.greedy", True, kind="bool", bind=False, help=t("next.greedy_help"))
seed = int(st.session_state.get("cfg.seed", 0))
if not bool(torch.isfinite(out.logits).all()):
    st.warning(t("next.nonfinite"))  # sampling from NaN probabilities is impossible, argmax of NaN meaningless
    st.stop()
with st.spinner(t("next.generating")):
    new = continuation(ctx.model, tuple(ids), n_new, 1.0 if greedy else temperature, greedy, seed)
run = ctx.token_pieces(ids + list(new))  # one sequence: a character the prompt began is named where it ends
prompt_text, new_text = text(run[:len(ids)]), text(run[len(ids):])
st.markdown(
    f'<div style="font-size:1.1rem;line-height:1.7;white-space:pre-wrap">{html_text(prompt_text)}'
    f'<mark style="background:#fde68a">{html_text(new_text, visible_breaks=True)}</mark></div>',
    unsafe_allow_html=True,
)
mode = t("next.mode_greedy") if greedy else t("next.mode_sample", temp=f"{temperature:.1f}", seed=seed)
st.caption(t("next.gen_caption", n=len(new), mode=mode) + " " + " · ".join(md_code(s) for s in ctx.token_strings(ids + list(new))[len(ids):]))
if len(new) < n_new:
    st.warning(t("next.stopped", got=len(new), want=n_new, limit=ctx.config.max_position_embeddings,
                 pe=ctx.config.position_embedding))
if ctx.tokenizer is None:
    st.caption(t("next.random_mode"))
