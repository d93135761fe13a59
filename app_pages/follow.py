"""Follow a token: one position's vector down the whole model, sub-step by sub-step (PageDown steps through them),
and where its prediction comes from (direct logit attribution).

The numbers are :mod:`analysis.follow`'s (read from the shared trace's activation record); the words are
:mod:`ui.follow`'s, computed from the row of the current step. Decisions written down there: the page does not switch
the shared sidebar to SmolLM2 by itself (one button does, with the example "The Eiffel Tower is in the city of"), and
under Post-Norm it shows no attribution (the stream is not a sum of the sub-layers' outputs; the page says so).
"""

import pandas as pd
import streamlit as st

from analysis.follow import attribution_defined, capped, first_top_step, heads_split, summed
from ui.caches.views import attribution_view, follow_view
from ui.examples import language_notice
from ui.figures.follow import attribution_bar, flow_chart
from ui.follow import (EXAMPLE, SMOLLM2, attribution_labels, attribution_sentence, slider_keys_to_steps, step_label,
                       step_sentence, use_smollm2)
from ui.format import DASH, number, percent
from ui.i18n import t
from ui.sidebar import explorer, trace
from ui.state import control
from ui.teaching.gate import page_shortcut
from ui.tokens import label, phrase
from ui.compare import one_side_note
from ui.widgets import chart, explain, first_screen, real_model_notice, revealed

HEAD_BARS = 20  # heads shown when attention is split into heads (the largest by |share|)
POSITION_PX = 240  # the token slider's width beside the step buttons

ctx = explorer()
cfg = ctx.config
L, T = cfg.num_hidden_layers, int(ctx.input_ids.shape[1])
ids = ctx.input_ids[0].tolist()
with first_screen(t("follow.title"), t("follow.explain")):
    one_side_note()
    real_model_notice(ctx.source)
    language_notice(ctx)
    if ctx.model_key != f"checkpoint:{SMOLLM2}":
        st.button(t("follow.use_smollm2"), key="follow.use_smollm2", on_click=use_smollm2, icon="🗼",
                  help=t("follow.use_smollm2_help", text=EXAMPLE))
    # one row: the token (a select slider: one line on a 720 px projector whatever the text's length, dragged on a
    # phone), Previous, Next, the step
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    position = control(controls.select_slider, t("follow.position"), "follow.position", T - 1, kind="choice",
                       options=list(range(T)), format_func=lambda p: ctx.tokens[p], help=t("follow.position_help"),
                       width=POSITION_PX)
    bar = st.progress(0.0, text=t("follow.progress", L=L))
    trace(ctx)  # the shared forward (cached)
    bar.progress(0.5, text=t("follow.progress", L=L))
    steps = follow_view(ctx.model, tuple(ids), position)
    bar.empty()

    n = len(steps)
    st.session_state["follow.step"] = min(max(1, int(st.session_state.get("follow.step", 1))), n)

    def _move(delta: int) -> None:
        st.session_state["follow.step"] = min(max(1, st.session_state["follow.step"] + delta), n)

    names = [step_label(r, cfg.norm_position) for _, r in steps.iterrows()]
    controls.button(t("follow.prev"), on_click=_move, args=(-1,), key="follow.prev", shortcut=page_shortcut("PageUp"),
                    disabled=st.session_state["follow.step"] == 1)
    controls.button(t("follow.next"), on_click=_move, args=(1,), key="follow.next",
                    shortcut=page_shortcut("PageDown"), disabled=st.session_state["follow.step"] == n)
    step = st.session_state["follow.step"]
    slider_keys_to_steps("follow.position", "follow.prev", "follow.next", on=page_shortcut("PageDown") is not None)
    controls.markdown(t("follow.step_now" if page_shortcut("PageDown") else "follow.step_now_lesson", step=step, n=n,
                        name=names[step - 1]))

    prefix = ids[: position + 1]
    shown_ids = sorted({int(i) for r in steps["top_ids"] for i in r})
    pieces = dict(zip(shown_ids, ctx.pieces_after(prefix, shown_ids)))
    input_pieces = ctx.pieces
    answer_step = first_top_step(steps)
    per = len(steps[steps["layer"] == 0])
    fig = flow_chart(steps, step - 1, names, {g: t(f"follow.group.{g}") for g in
                                              ("line", "stream", "norm", "attn", "mlp", "head")},
                     t("follow.flow_title", tok=label(input_pieces[position])), t("follow.flow_x", per=per, L=L),
                     t("follow.flow_y"))

    def _listed(tokens, weights) -> str:
        return ", ".join(f"{tok} ({percent(w)})" for tok, w in zip(tokens, weights)) or DASH

    table = pd.DataFrame({
        t("follow.col.step"): steps["step"] + 1, t("follow.col.name"): names, t("follow.col.hook"): steps["hook"],
        t("follow.col.norm"): steps["norm"], t("follow.col.resid_norm"): steps["resid_norm"],
        t("follow.col.delta_ratio"): steps["delta_ratio"], t("follow.col.cosine"): steps["cosine"],
        t("follow.col.lens"): [_listed([label(pieces[i]) for i in r], p) for r, p in
                               zip(steps["top_ids"], steps["top_probs"])],
        t("follow.col.keys"): [_listed([f"{k} {ctx.tokens[k]}" for k in r], w) for r, w in
                               zip(steps["keys"], steps["key_weights"])],
    })
    if cfg.num_local_experts:
        table[t("follow.col.experts")] = [_listed([str(e + 1) for e in r], w) for r, w in
                                          zip(steps["experts"], steps["expert_weights"])]
    chart(fig, table, "follow.flow", view={"position": position}, fill_screen=True)

if revealed("follow.flow"):  # below the chart: on a 720 px projector the chart keeps the first screen
    st.markdown(step_sentence(steps, step - 1, cfg.norm_position, lambda i: phrase(pieces[i]),
                              lambda p: phrase(input_pieces[p]), phrase(input_pieces[position]), answer_step,
                              cfg.vocab_size))
    st.markdown(t("follow.answer_at", final=phrase(pieces[int(steps["top_ids"].iloc[-1][0])]), step=answer_step + 1,
                  name=names[answer_step]))
    with st.expander(t("follow.table_title")):
        shown = table.drop(columns=[t("follow.col.step")])  # in order, the current row marked (the CSV numbers them)
        numbers = [t(f"follow.col.{c}") for c in ("norm", "resid_norm", "delta_ratio", "cosine")]
        st.dataframe(shown.style.apply(lambda r: ["background-color: #fde68a" if r.name == step - 1 else ""
                                                  for _ in r], axis=1)
                     .format({c: (lambda v: number(v, ".4g")) for c in numbers}, na_rep=DASH),
                     hide_index=True, width="stretch")

# ---- where the prediction comes from ----
st.header(t("follow.attr.title"))
explain(t("follow.attr.explain"))
if not attribution_defined(cfg.norm_position):
    st.info(t("follow.attr.post"))
    st.stop()
top_ids = [int(i) for i in steps["top_ids"].iloc[-1]]
c1, c2 = st.columns(2)
target = control(c1.selectbox, t("follow.attr.target"), "follow.target", top_ids[0], kind="choice", options=top_ids,
                 format_func=lambda i: label(pieces[i]))
others = [-1] + [i for i in top_ids if i != target]
other = control(c2.selectbox, t("follow.attr.other"), "follow.other", -1, kind="choice", options=others,
                format_func=lambda i: t("follow.attr.none") if i < 0 else label(pieces[i]))
by_head = False
if heads_split(cfg.norm_position):
    by_head = control(st.toggle, t("follow.attr.heads"), "follow.heads", False, kind="bool")
else:
    st.caption(t("follow.attr.heads_unavailable"))
attr = attribution_view(ctx.model, tuple(ids), position, target, None if other < 0 else other, by_head)
what = t("follow.attr.logit_of", a=phrase(pieces[target])) if other < 0 else \
    t("follow.attr.diff_of", a=label(pieces[target]), b=label(pieces[other]))
parts = attr.table[~attr.table["component"].isin(("head", "attn_bias"))].reset_index(drop=True)
labels, groups = attribution_labels(parts)
group_names = {"stream": t("follow.attr.group.stream"), "attn": t("follow.group.attn"), "mlp": t("follow.group.mlp")}
fig = attribution_bar(parts, labels, groups, group_names,
                      t("follow.attr.chart_title", what=what),
                      t("follow.attr.x"), t("follow.attr.y"))
data = parts.assign(label=labels)
chart(fig, data, "follow.attr", view={"position": position})
if revealed("follow.attr"):
    st.caption(t("follow.attr.frozen", what=t("follow.attr.std" if cfg.norm_type == "layernorm" else "follow.attr.rms"),
                 scale=number(attr.scale, ".4g"), L=L, total=number(summed(attr), ".6g"), logit=number(attr.logit, ".6g")))
    if attr.softcap is not None:
        st.caption(t("follow.attr.softcap", cap=number(attr.softcap, "g"), logit=number(capped(attr.logit, attr.softcap), ".4g")))
    st.markdown(attribution_sentence(attr))
if by_head:
    heads = attr.table[attr.table["component"] == "head"]
    heads = heads.reindex(heads["contribution"].abs().sort_values(ascending=False).index)[:HEAD_BARS]
    h_labels, h_groups = attribution_labels(heads)
    fig = attribution_bar(heads, h_labels, h_groups, group_names, t("follow.attr.heads_title", n=len(heads), what=what),
                          t("follow.attr.heads_x"), t("follow.attr.y"))
    chart(fig, heads.assign(label=h_labels), "follow.heads", view={"position": position})
