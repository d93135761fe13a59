"""Logit lens & tokenizers: the raw logit lens (every depth read through the final norm and LM head) as a
depth x position heatmap, and the sidebar text under the bundled BPE and SmolLM2's byte-level BPE.

Depths are 0 = embedding, i = after block i; positions are 0-based.
"""

import numpy as np
import pandas as pd
import streamlit as st

from analysis import compare as side_compare, lens
from analysis.tokenizers import compare, tokenize
from engine.cost import lens_flops
from engine.tokenizer import TextTokenizer
from ui.examples import language_notice
from ui.caches.views import lens_table, lens_whole, pretrained_tokenizer
from ui.controls import index_slider, window_slider
from ui.compare import compared
from ui.compare_views import say
from ui.figures.compare import cap_height, relative_depth_lines
from ui.figures.lens import lens_heatmap
from ui.figures.tokenizers import token_chips_html, tokens_bar
from ui.format import number
from ui.i18n import t
from ui.presenter import pairs, presenter_mode
from ui.sidebar import explorer, tokenizer_for, trace
from ui.tokens import label, phrase
from ui.widgets import asked, chart, explain, first_screen, real_model_notice, revealed, when_asked
from ui.window import rows_that_fit

WINDOW = 20  # positions per lens heatmap (per-cell token text stays readable on a projector)
COMPARED_POSITIONS = 6  # positions per compared heatmap (half the width, one colour bar for both)
COMPARED_PX = 360  # a compared chart's height at most in presenter mode (x 1.25 there: within the first screen)
DEPTHS_PX = 860  # the heatmap's plot height at its tallest outside presenter mode (ui/figures/lens.py)
CHIPS_MAX = 400  # tokens drawn as chips per tokenizer
SMOLLM2 = "smollm2-135m"


def _prob(p: float) -> str:
    """A probability as text; below 1e-6 as "< 1e-6" (float32 underflows to 0 long before that matters)."""
    return f"{p:.3g}" if p >= 1e-6 else "< 1e-6"


def side_lens(side, parts: tuple = ((None, None),)):
    """One side's lens table (with its progress bar) of the cells ``parts`` name (``(positions, depths)`` pairs,
    None: all; default: every cell) and the labels of its predictions, as the single view makes them: ``labels`` for
    the chart, ``named`` (pieces) for sentences, both by (position, token id)."""
    L, T = side.config.num_hidden_layers, int(side.input_ids.shape[1])
    tables = []
    for positions, depths in parts:
        P, D = T if positions is None else len(positions), L + 1 if depths is None else len(depths)
        bar = st.progress(0.0, text=t("lens.progress", depths=D, positions=P))
        tables.append(lens_table(side.model, tuple(side.input_ids[0].tolist()),
                                 lambda f: bar.progress(f, text=t("lens.progress", depths=D, positions=P)),
                                 positions, depths))
        bar.empty()
    table = pd.concat(tables).drop_duplicates(["depth", "position"]).sort_values(["depth", "position"])
    table = table.reset_index(drop=True)  # one row per cell, depth-major as the whole table
    # the one display rule: a prediction at position p is labelled as the token that would follow the input up to p
    input_ids = side.input_ids[0].tolist()
    labels, named = {}, {}
    for p, g in table.groupby("position"):
        shown = sorted(set(g["top_id"]) | set(g["final_id"]))
        pieces = side.pieces_after(input_ids[:p + 1], shown)
        labels.update({(p, i): label(x) for i, x in zip(shown, pieces)})
        named.update({(p, i): x for i, x in zip(shown, pieces)})
    return table, labels, named


def drawn(T: int, positions: tuple[int, int], depths: tuple[int, int]) -> tuple:
    """The ``side_lens`` parts of a heatmap's window (positions and depths ``[lo, hi)``): the cells it draws and
    every depth of the last position (the sentences about it)."""
    return (tuple(range(*positions)), tuple(range(*depths))), ((T - 1,), None)


def compared_window(side) -> tuple[tuple[int, int], tuple[int, int]]:
    """A compared heatmap's window: the side's last ``COMPARED_POSITIONS`` and as many of its deepest depths as the
    half-width chart holds."""
    L, T = side.config.num_hidden_layers, int(side.input_ids.shape[1])
    return (max(0, T - COMPARED_POSITIONS), T), (max(0, L + 1 - rows_that_fit(COMPARED_PX)), L + 1)


def depth_names(L: int) -> list[str]:
    return [t("lens.embed")] + [t("lens.block", n=i) for i in range(1, L + 1)]


def lens_figure(side, table, labels, positions: tuple[int, int], depths: tuple[int, int], title: str):
    """The heatmap of one side's window (positions and depths ``[lo, hi)``) as the single view draws it, and the
    rows it draws."""
    (start, stop), (d0, d1) = positions, depths
    shown = table[table["position"].between(start, stop - 1) & table["depth"].between(d0, d1 - 1)].copy()
    shown["depth"] -= d0  # the figure's rows are the window's
    pos_labels = [f"{p} {side.tokens[p]}" for p in range(start, stop)]
    names = depth_names(side.config.num_hidden_layers)
    return lens_heatmap(shown, labels, names[d0:d1], pos_labels, title, t("lens.x"), t("lens.y"), t("lens.unit"),
                        t("lens.hover"), first=(d0, start)), shown


def compare_lens(pair) -> None:
    """Each side's lens over its last positions and deepest depths (as many as a half-width chart holds), the
    final prediction's lens probability at each side's last position against relative depth, and the sentence:
    at which depth each side's final top token becomes and stays top-1."""
    last = {}
    columns = st.columns(2)
    for column, (letter, side) in zip(columns, pair.sides()):
        with column:
            L, T = side.config.num_hidden_layers, int(side.input_ids.shape[1])
            window = compared_window(side)
            table, labels, named = side_lens(side, drawn(T, *window))
            fig, _ = lens_figure(side, table, labels, *window,
                                 t("compare.title", side=letter.upper(), title=t("compare.lens_title")))
            if presenter_mode():
                cap_height([fig], COMPARED_PX)
            fig.update_traces(showscale=letter == "b")  # one scale (0..1) on both: B's bar says it for A too
            fig.update_xaxes(tickangle=-60)
            chart(fig, table, f"lens.heatmap.{letter}", columns=2, view={"side": letter.upper()})
            last[letter] = (table, named, T - 1, L)
    curves = side_compare.lens_by_relative_depth(last["a"][0], last["b"][0], last["a"][2], last["b"][2])
    said = []
    for letter, side in pair.sides():
        table, named, p, L = last[letter]
        d = side_compare.first_top_depth_at(table, p)
        final = int(table.loc[table["position"] == p, "final_id"].iloc[0])
        said.append(t(f"compare.lens_side_{letter}", tok=phrase(named[p, final]), depth=depth_names(L)[d], L=L,
                      rel=f"{d / L:.2f}" if L else "1"))
    say(pair, said, "lens.heatmap.a", skip=("heads",))  # heads do not align here
    fig = relative_depth_lines(curves, {"a": t("compare.side", side="A"), "b": t("compare.side", side="B")},
                               t("compare.lens_rel_title"), t("compare.lens_rel_x"), t("lens.unit"))
    if presenter_mode():
        cap_height([fig], COMPARED_PX)
    chart(fig, curves, "lens.relative")


ctx = explorer()
pair = compared(ctx)
L, T = ctx.config.num_hidden_layers, int(ctx.input_ids.shape[1])
ids = tuple(ctx.input_ids[0].tolist())
# every position (the median sentence, the whole table) at once when it is cheap or some session decoded it;
# otherwise the chart's positions first and the rest on request (SmolLM2: 31 products of a row with the head each)
whole_gflop = lens_flops(ctx.config, (L + 1) * T) / 1e9
whole = lens_whole(ctx.model, ids)[0] or asked("lens.all", whole_gflop)
with first_screen(t("lens.title"), t("lens.explain")):
    real_model_notice(ctx.source)
    language_notice(ctx)

    out = trace(ctx)
    input_labels = ctx.tokens
    depth_labels = depth_names(L)
    if pair is not None:
        compare_lens(pair)
        window = compared_window(ctx)
        parts = drawn(T, *window)  # the edited side's sentences below: its compared cells (cached)
        shown = window[0][1] - window[0][0]  # positions drawn
    else:
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
        parts = drawn(T, (start, stop), (d0, d1))
        shown = stop - start  # positions drawn
    # a window over every cell is the whole table (kept as such: the median, the table and later windows use it)
    whole = whole or parts[0] == (tuple(range(T)), tuple(range(L + 1)))
    table, labels, named = side_lens(ctx, ((None, None),) if whole else parts)
    if pair is None:
        fig, _ = lens_figure(ctx, table, labels, (start, stop), (d0, d1), t("lens.chart_title"))
    data = pd.DataFrame({
        t("lens.col.depth"): [depth_labels[d] for d in table["depth"]], t("lens.col.position"): table["position"],
        t("lens.col.input"): [input_labels[p] for p in table["position"]],
        t("lens.col.top"): [labels[k] for k in zip(table["position"], table["top_id"])],
        t("lens.col.top_prob"): table["top_prob"],
        t("lens.col.final"): [labels[k] for k in zip(table["position"], table["final_id"])],
        t("lens.col.p_final"): table["p_final"],
        t("lens.col.rank_final"): table["rank_final"],
    })
    if pair is None:
        chart(fig, data, "lens.heatmap", fill_screen=True)
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
st.caption(t("lens.whitespace"))

first = lens.first_top_depth(table)
last = table[table["position"] == T - 1].sort_values("depth")
d_last = int(first.loc[first["position"] == T - 1, "depth"].iloc[0])
if revealed("lens.heatmap"):  # the sentences and the table wait for a lesson's answer
    st.markdown(t("lens.last_sentence", tok=phrase(ctx.pieces[T - 1]),
                  final=phrase(named[T - 1, int(last["final_id"].iloc[-1])]), p=_prob(last["p_final"].iloc[-1]),
                  depth=depth_labels[d_last], p0=_prob(last["p_final"].iloc[0])))
    if whole:
        st.markdown(t("lens.median_sentence", positions=T, median=f"{float(np.median(first['depth'])):g}", L=L))
        with st.expander(t("lens.table_title")):
            st.dataframe(data, hide_index=True, width="stretch")
    else:  # draws the button (a press reruns with every position)
        when_asked("lens.all", whole_gflop, t("lens.all_on_request", shown=shown, positions=T,
                                              gflop=number(whole_gflop, ".3g")), t("lens.all_run", positions=T))

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
