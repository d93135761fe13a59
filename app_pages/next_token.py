"""Next token: the top-k next-token distribution at any position, temperature, and a short continuation.

Positions are 0-based (as on the axes of the other pages): position t's logits predict token t+1.
"""

import streamlit as st
import torch

import analysis
from engine.cost import forward_flops
from analysis import compare
from ui.compare import compared, same_vocabulary
from ui.compare_views import say
from ui.examples import language_notice
from ui.caches.views import continuation
from ui.controls import index_slider
from ui.figures.compare import cap_height, change_bars, union_range
from ui.figures.next_token import topk_bar
from ui.format import number, percent, scientific
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.sidebar import explorer, trace
from ui.state import control
from ui.widgets import DECODE_STEP_TOKENS, chart, first_screen, on_request
from ui.escape import html_text, md, md_code, plotly
from ui.tokens import label, phrase, text

K_MAX = 20
NEW_TOKENS_MAX = 32
COMPARED_PX = 360  # a compared chart's height at most in presenter mode (x 1.25 there: within the first screen)


def side_table(side, pos: int, k: int, temperature: float):
    """One side's logits at ``pos`` and its top-k table, as the single view computes them."""
    ids = side.input_ids[0].tolist()
    logits = trace(side).logits[0, pos]  # (V,)
    return logits, analysis.next_token_table(logits, lambda c: side.strings_after(ids[:pos + 1], c), k=k,
                                             temperature=temperature)


def side_position(side, pos: int, last: bool) -> int:
    """The position a side predicts from: its own last one while the slider sits on the sidebar side's last (the
    next token of each whole text), else ``pos`` (at most its last)."""
    T = int(side.input_ids.shape[1])
    return T - 1 if last else min(pos, T - 1)


def _named(side, pos: int, token_id: int) -> str:
    return phrase(side.pieces_after(side.input_ids[0].tolist()[:pos + 1], [token_id])[0])


def compare_next(pair, pos: int, last: bool, k: int, temperature: float) -> None:
    """A's and B's top-k side by side on one probability axis, the sentence, then A − B of the top tokens'
    probabilities (by id in one vocabulary, else by token text)."""
    drawn = {}
    for letter, side in pair.sides():
        p = side_position(side, pos, last)
        logits, df = side_table(side, p, k, temperature)
        title = t("compare.title", side=letter.upper(), title=t("compare.next_title", k=len(df), pos=p,
                                                                temp=f"{temperature:.1f}"))
        drawn[letter] = (p, logits, df, topk_bar(df, title, t("next.x"), t("next.y")))
    figs = [d[3] for d in drawn.values()]
    union_range(figs)
    for fig in figs:
        fig.update_xaxes(nticks=5)  # half the width: fewer percentages, upright
    if presenter_mode():
        cap_height(figs, COMPARED_PX)
    for column, (letter, (p, _, df, fig)) in zip(st.columns(2), drawn.items()):
        with column:
            chart(fig, df, f"next.topk.{letter}", columns=2, view={"side": letter.upper(), "position": p})
    (pa, la, da, _), (pb, lb, db, _) = drawn["a"], drawn["b"]
    said = [t("compare.next_sentence", ta=_named(pair.a, pa, int(da["token_id"].iloc[0])),
              pa=percent(da["probability"].iloc[0]), tb=_named(pair.b, pb, int(db["token_id"].iloc[0])),
              pb=percent(db["probability"].iloc[0]))]
    if pa != pb:
        said.append(t("compare.next_positions", a=pa, b=pb))
    one = same_vocabulary(pair)
    if one:
        table = compare.probability_change(la, lb, compare.top_ids(da, db), temperature)
        pieces = pair.a.pieces_after(pair.a.input_ids[0].tolist()[:pa + 1], table["token_id"].tolist())
        names = [label(x) for x in pieces]
    else:
        table = compare.topk_by_text(da, db)
        names = table["token"].tolist()
    row = compare.largest_change(table)
    if row is not None:
        token = phrase(pieces[row]) if one else t("tok.quoted", text=md(names[row]))
        a, b = percent(table["a"].iloc[row]), percent(table["b"].iloc[row])
        said.append(t("compare.next_change", tok=token, a=a, b=b) if a != b else t(
            "compare.next_close", tok=token, delta=scientific(abs(table["change"].iloc[row]) * 100)))
    if not one:
        said.append(t("compare.next_by_text", n=len(table), ka=len(da), kb=len(db)))
    say(pair, said, "next.topk.a", skip=("heads",))  # heads do not align here
    if row is None:
        return
    fig = change_bars(table, [plotly(n) for n in names], t("compare.next_diff_title", n=len(table)),
                      t("compare.next_diff_x"), t("compare.next_diff_y"))
    if presenter_mode():
        cap_height([fig], COMPARED_PX)
    chart(fig, table, "next.diff")


ctx = explorer()
pair = compared(ctx)
# the box's last sentence is about the model on screen: random init, or trained (in this session or a checkpoint)
with first_screen(t("next.title"), t("next.explain") + " "
                  + t("next.explain_random" if ctx.source == "random" else "next.explain_trained")):
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
    logits, df = side_table(ctx, pos, k, temperature)
    if pair is None:
        fig = topk_bar(df, t("next.chart_title", k=len(df), pos=pos, temp=f"{temperature:.1f}"), t("next.x"),
                       t("next.y"))
        chart(fig, df, "next.topk", fill_screen=True)
    else:
        compare_next(pair, pos, pos == T - 1, k, temperature)
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
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


def continuation_section() -> None:
    """The continuation: at once on a small model, on request on a large one (each new token a decode step that
    reads every weight: SmolLM2's 16 take several forwards' time)."""
    gflop = n_new * forward_flops(ctx.config, DECODE_STEP_TOKENS) / 1e9
    new = on_request(continuation, (ctx.model, tuple(ids), n_new, 1.0 if greedy else temperature, greedy, seed),
                     "next.continuation", gflop, t("next.gen_on_request", n=n_new, gflop=number(gflop, ".3g")),
                     t("next.gen_run", n=n_new), spinner=t("next.generating"))
    if new is None:
        return
    run = ctx.token_pieces(ids + list(new))  # one sequence: a character the prompt began is named where it ends
    prompt_text, new_text = text(run[:len(ids)]), text(run[len(ids):])
    st.markdown(
        f'<div style="font-size:1.1rem;line-height:1.7;white-space:pre-wrap">{html_text(prompt_text)}'
        f'<mark style="background:#fde68a">{html_text(new_text, visible_breaks=True)}</mark></div>',
        unsafe_allow_html=True,
    )
    mode = t("next.mode_greedy") if greedy else t("next.mode_sample", temp=f"{temperature:.1f}", seed=seed)
    st.caption(t("next.gen_caption", n=len(new), mode=mode) + " "
               + " · ".join(md_code(s) for s in ctx.token_strings(ids + list(new))[len(ids):]))
    if len(new) < n_new:
        st.warning(t("next.stopped", got=len(new), want=n_new, limit=ctx.config.max_position_embeddings,
                     pe=ctx.config.position_embedding))


if not bool(torch.isfinite(out.logits).all()):
    st.warning(t("next.nonfinite"))  # sampling from NaN probabilities is impossible, argmax of NaN meaningless
else:
    continuation_section()
if ctx.tokenizer is None:
    st.caption(t("next.random_mode"))
