"""Attention: one head's matrix stage by stage, all heads of a layer, the layers x heads overview, per-head
entropy, and the two checks every causal attention pattern must pass.

Layers and heads are shown 1-based everywhere on this page; token positions are 0-based (as on the axes).
"""

import numpy as np
import pandas as pd
import streamlit as st

import analysis
from analysis import compare
from ui.compare import compared
from ui.compare_views import say
from ui.examples import language_notice
from ui.caches.views import attention_grid
from ui.controls import column_window, index_slider, window_slider
from ui.figures.attention import attention_heatmap, entropy_bar, entropy_heatmap, heads_grid
from ui.figures.common import position_axis
from ui.format import number, scientific
from ui.i18n import current_lang, labeler, t
from ui.presenter import pairs
from ui.sidebar import explorer, trace
from ui.state import control
from ui.widgets import chart, first_screen, revealed, screen_heading
from ui.tokens import phrase
from ui.window import (COLOUR_CELL_PX, COMPARE_HEATMAP_W, PRESENTER_HEATMAP_PX, PRESENTER_HEATMAP_W, READABLE_CELL_PX,
                       rows_that_fit)

GRID_MAX_CELLS = 144  # layers x heads small heatmaps drawn at most (GPT-2 small: 12 x 12)
GRID_MAX_TOKENS = 32  # tokens per small heatmap in the overview grid
HEADS_MAX_TOKENS = 64  # tokens per small heatmap in the all-heads view
HEATMAP_PX = 600  # the one-head heatmap's plot height at its tallest outside presenter mode (ui/figures/attention.py)
HEATMAP_W = 800  # and about its plot width on a laptop screen (1440 px, the sidebar open)
COMPARE_MAP_HEIGHT = 420  # each compared map's figure height (a single map grows with its rows, up to 760)
ROW_SUM_TOL = 1e-5  # float32 softmax rows sum to 1 within a few ulps
FORMULAS = {  # math, not words: the same in every language (HD = head_dim, filled in below)
    "raw": r"S = Q K^\top, \quad S_{ij} = q_i \cdot k_j",
    "scaled": r"S_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_{\text{head}}}} = \frac{q_i \cdot k_j}{\sqrt{HD}}",
    "masked": r"\tilde S_{ij} = \begin{cases} q_i \cdot k_j / \sqrt{HD} & j \le i \\ -\infty & j > i \end{cases}",
    "softmax": r"A_{ij} = \frac{\exp \tilde S_{ij}}{\sum_{j' \le i} \exp \tilde S_{ij'}}, \quad \sum_j A_{ij} = 1",
}



def side_matrix(side, layer: int, head: int, stage: str) -> np.ndarray | None:
    """One side's matrix of this head and stage (the single view's), None where the side lacks the head."""
    if layer > side.config.num_hidden_layers or head > side.config.num_attention_heads:
        return None
    return analysis.attention_stage(trace(side), layer - 1, head - 1, stage)


def window(n: int, lo: int, hi: int) -> tuple[int, int]:
    """The sidebar's window of positions ``lo..hi-1`` on a side of ``n`` tokens (as many rows, the last ones when
    it is shorter)."""
    start = min(lo, max(n - (hi - lo), 0))
    return start, min(start + hi - lo, n)


def compared_map(fig, labels: list[str]) -> None:
    """A compared map (A's, B's, A − B) as it fits half a screen and a phone: colour-only cells (their numbers in
    the hover), 420 px tall (both maps and the sentence under them on one screen), labels thinned to rows 16 px
    apart and slanted columns twice that."""
    fig.update_layout(height=COMPARE_MAP_HEIGHT)
    fig.update_yaxes(**position_axis(labels, max_ticks=rows_that_fit(COMPARE_HEATMAP_W)))
    fig.update_xaxes(**position_axis(labels, max_ticks=rows_that_fit(COMPARE_HEATMAP_W, 2 * READABLE_CELL_PX)))


def compare_heads(pair, layer: int, head: int, stage: str, lo: int, hi: int, unit: str) -> None:
    """Sides A and B of this head side by side on one colour scale, the sentence, then A − B where both have it."""
    mats = {letter: side_matrix(side, layer, head, stage) for letter, side in pair.sides()}
    drawn = [m for m in mats.values() if m is not None]
    limit = None if stage == "softmax" else compare.symmetric_limit(*drawn)  # softmax: 0..1 on both already
    view = {"layer": layer, "head": head, "stage": stage}
    title = t("attn.heatmap_title", stage=t(f"attn.stage.{stage}"), layer=layer, head=head)
    for column, (letter, side) in zip(st.columns(2), pair.sides()):
        with column:
            m = mats[letter]
            if m is None:
                st.info(t("compare.no_head", side=letter.upper(), layer=layer, head=head,
                          L=side.config.num_hidden_layers, nh=side.config.num_attention_heads))
                continue
            a, b = window(m.shape[0], lo, hi)
            names = side.tick_labels()
            fig = attention_heatmap(pd.DataFrame(m[a:b, a:b], index=names[a:b], columns=names[a:b]), names[a:b], stage,
                                    t("compare.title", side=letter.upper(), title=title), t("attn.x"), t("attn.y"),
                                    unit, limit=limit or None, cell_text=False)
            compared_map(fig, names[a:b])
            table = pd.DataFrame(m, index=names, columns=names).reset_index(names=t("attn.y"))
            chart(fig, table, f"attn.heatmap.{letter}", columns=2, view={"side": letter.upper(), **view})
    change = compare.largest_attention_change(trace(pair.a).attentions, trace(pair.b).attentions)
    where = {} if change is None else dict(layer=change.layer + 1, head=change.head + 1, q=change.query, k=change.key)
    said = [t("compare.attn_same")] if change is None or change.a == change.b else \
        [t("compare.attn_close", delta=scientific(abs(change.a - change.b)), **where)] \
        if number(change.a) == number(change.b) else [t("compare.attn_sentence", a=number(change.a), b=number(change.b),
                                                        **where)]
    say(pair, said, "attn.diff")
    if len(drawn) < 2:
        st.caption(t("compare.diff_none"))
        return
    diff = compare.attention_difference(mats["a"], mats["b"])
    n = diff.shape[0]
    same_tokens = pair.a.tokens[:n] == pair.b.tokens[:n]
    names = pair.a.tick_labels()[:n] if same_tokens else [str(i) for i in range(n)]
    a, b = window(n, lo, hi)
    fig = attention_heatmap(pd.DataFrame(diff[a:b, a:b], index=names[a:b], columns=names[a:b]), names[a:b], "scaled",
                            t("compare.diff_title", stage=t(f"attn.stage.{stage}"), layer=layer, head=head),
                            t("attn.x"), t("attn.y"), t("compare.diff_unit"), limit=compare.symmetric_limit(diff) or None,
                            cell_text=False)
    compared_map(fig, names[a:b])
    chart(fig, pd.DataFrame(diff, index=names, columns=names).reset_index(names=t("attn.y")), "attn.diff", view=view)
    if not same_tokens:
        st.caption(t("compare.other_tokens"))
    if n < max(mats["a"].shape[0], mats["b"].shape[0]):
        st.caption(t("compare.diff_cut", last=n - 1, ta=mats["a"].shape[0], tb=mats["b"].shape[0]))


ctx = explorer()
pair = compared(ctx)
with first_screen(t("attn.title"), t("attn.explain")):
    language_notice(ctx)

    out = trace(ctx)
    L = ctx.config.num_hidden_layers
    nh = ctx.config.num_attention_heads
    T = int(ctx.input_ids.shape[1])
    labels = ctx.tick_labels()

    # ---- which head, which stage ----
    # Math, not words: the same in both languages, so a shared link (the URL holds the label) opens in either.
    # one row of controls: the heatmap starts high on a projector; on a phone the two sliders share a row and
    # the stage buttons wrap onto a second one rather than scroll out of sight
    c1, c2, c4, c3 = pairs("attn.controls").columns([1, 1, 1, 2])
    layer = index_slider(t("attn.layer"), 1, L, "attn.layer", container=c1)
    head = index_slider(t("attn.head"), 1, nh, "attn.head", container=c2)
    stage = control(c3.segmented_control, t("attn.stage"), "attn.stage", "softmax", kind="choice",
                    options=list(analysis.ATTENTION_STAGES), format_func=labeler("attn.stage."), required=True,
                    help=t("attn.stage_help"), wrap=True) or "softmax"

    # ---- one head ----
    screen_heading(t("attn.head_title", layer=layer, head=head))
    # the head's width in the formula once the open question (if any) is answered: it states the scale
    width = str(ctx.config.head_dim) if revealed("attn.heatmap") else r"d_{\text{head}}"
    st.latex(FORMULAS[stage].replace("HD", width))
    mat = analysis.attention_stage(out, layer - 1, head - 1, stage)  # (T, T) float32: every answer reads this
    # the positions drawn (queries and keys): as many as fit at a readable row height, the last first
    # (comparing: over the longer side's positions, so neither side's last positions are cut without a slider)
    span = T if pair is None else max(int(side.input_ids.shape[1]) for _, side in pair.sides())
    # comparing: a square window each half fits across in colour-only cells (their numbers in the hover)
    rows_px, cell_px = (HEATMAP_PX, READABLE_CELL_PX) if pair is None else (COMPARE_HEATMAP_W, COLOUR_CELL_PX)
    lo, hi = window_slider(t("attn.start"), span, "attn.start", rows_px, "attn.heatmap",
                           help=t("attn.start_help", n=rows_that_fit(rows_px, cell_px)), container=c4,
                           presenter_px=PRESENTER_HEATMAP_PX if pair is None else COMPARE_HEATMAP_W, cell_px=cell_px)
    # the keys those queries see, as many as fit across (comparing: the square window both sides share)
    k0, k1 = column_window(min(hi, T), HEATMAP_W, "attn.heatmap", PRESENTER_HEATMAP_W) if pair is None else (lo, hi)
    if (lo, hi, k0, k1) != (0, span, 0, span):
        st.caption(t("attn.shown", q0=lo, q1=hi - 1, k0=k0, k1=k1 - 1, T=span - 1))
    df = pd.DataFrame(mat[lo:hi, k0:k1], index=labels[lo:hi], columns=labels[k0:k1])  # (queries, keys) shown
    sink = analysis.attention_sink(out, layer - 1, head - 1) if stage == "softmax" else None  # (T,) or None
    unit = t("attn.unit_prob") if stage == "softmax" else t("attn.unit_score")
    fig = attention_heatmap(df, labels[lo:hi], stage, t("attn.heatmap_title", stage=t(f"attn.stage.{stage}"), layer=layer,
                                                          head=head), t("attn.x"), t("attn.y"), unit,
                            sink=None if sink is None else sink[lo:hi], sink_label=t("attn.sink_col"),
                            key_labels=labels[k0:k1], first=(lo, k0))
    full = pd.DataFrame(mat, index=labels, columns=labels)  # the download: every position, not the window
    table = full if sink is None else full.assign(**{t("attn.sink_col"): sink})
    if pair is None:
        chart(fig, table.reset_index(names=t("attn.y")), "attn.heatmap",
              view={"layer": layer, "head": head, "stage": stage}, fill_screen=True)
    else:
        compare_heads(pair, layer, head, stage, lo, hi, unit)
st.caption(t("attn.caption_masked") if stage in ("masked", "softmax") else t("attn.caption_unmasked"))
masked = analysis.masked_cells(out, layer - 1)[head - 1]  # (T, T): the layer's mask, read from the run
if revealed("attn.heatmap"):  # it reads the chart out: it waits with it while a lesson asks
    band = int(np.tril(masked, -1).sum())  # cells below the diagonal the mask removes: a sliding window's band
    if ctx.config.layer_type(layer - 1) == "sliding_attention":
        w = ctx.config.sliding_window
        st.caption(t("attn.caption_window", layer=layer, w=w, before=w - 1, band=f"{band:,}",
                     seen=int((~masked).sum(-1).max())))
    if sink is not None:
        st.caption(t("attn.caption_sink", lo=f"{float(sink.min()):.3f}", hi=f"{float(sink.max()):.3f}",
                     q=int(sink.argmax()), rest=f"{1 - float(sink.max()):.3f}"))
    if stage == "softmax" and T > 1:  # row 0's one key: weight exactly 1, unless a sink shares its softmax
        w0 = float(mat[0, 0])  # the chart's own cell
        if sink is not None:
            st.caption(t("attn.row0_sink", tok=phrase(ctx.pieces[0]), w=number(w0), share=number(sink[0])))
        else:
            st.caption(t("attn.row0", tok=phrase(ctx.pieces[0])) if w0 == 1.0
                       else t("attn.row0_measured", tok=phrase(ctx.pieces[0]), w=number(w0)))

# ---- all heads of this layer ----
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
st.subheader(t("attn.heads_title", layer=layer))
n_small = min(T, HEADS_MAX_TOKENS)
if n_small < T:
    st.caption(t("attn.small_capped", n=n_small, total=T))
pattern = out.attentions[layer - 1][0].float().cpu().numpy()  # (nh, T, T)
hidden = analysis.masked_cells(out, layer - 1)  # (nh, T, T): the future, and before a sliding window
mats = [np.where(hidden[h], np.nan, pattern[h])[:n_small, :n_small] for h in range(nh)]
fig = heads_grid(mats, [t("attn.head_n", head=h + 1) for h in range(nh)], t("attn.heads_chart", layer=layer),
                 t("attn.unit_prob"))
chart(fig, None, "attn.heads")

# ---- entropy of each head ----
ent = analysis.head_entropy(out)
st.subheader(t("attn.entropy_title"))
st.caption(t("attn.entropy_caption"))
layer_ent = ent[ent["layer"] == layer - 1]
fig = entropy_bar(layer_ent, t("attn.entropy_chart", layer=layer), t("attn.head_axis"), t("attn.entropy_axis"),
                  t("attn.uniform"))
chart(fig, layer_ent.assign(layer=layer_ent["layer"] + 1, head=layer_ent["head"] + 1), "attn.entropy")


# ---- every layer and head ----
st.subheader(t("attn.overview_title"))
if L * nh <= GRID_MAX_CELLS:
    n_grid = min(T, GRID_MAX_TOKENS)
    if n_grid < T:
        st.caption(t("attn.small_capped", n=n_grid, total=T))
    fig = attention_grid(ctx.model, tuple(ctx.input_ids[0].tolist()), n_grid, current_lang())
    chart(fig, None, "attn.grid")
else:
    st.info(t("attn.grid_too_big", L=L, nh=nh, cells=L * nh, cap=GRID_MAX_CELLS))
fig = entropy_heatmap(ent, t("attn.entropy_map", uniform=f"{float(ent['max_entropy'].iloc[0]):.3f}"),
                      t("attn.head_axis"), t("attn.layer_axis"), t("attn.entropy_unit"))
chart(fig, ent.assign(layer=ent["layer"] + 1, head=ent["head"] + 1), "attn.entropy_map")

# ---- checks ----
st.subheader(t("attn.checks_title"))
st.caption(t("attn.checks_caption"))
checks = analysis.attention_checks(out)
ok = (checks["finite"] & (checks["max_row_sum_error"] <= ROW_SUM_TOL) & (checks["max_upper_triangle"] == 0.0)).to_numpy()


table = pd.DataFrame({
    t("attn.col.layer"): checks["layer"] + 1,
    t("attn.col.row_sum"): [scientific(v) for v in checks["max_row_sum_error"]],
    t("attn.col.upper"): [scientific(v) for v in checks["max_upper_triangle"]],
    t("attn.col.verdict"): [t("attn.pass") if o else t("attn.fail") for o in ok],
})
st.dataframe(table, hide_index=True, width="stretch")
if ok.all():
    st.success(t("attn.checks_ok", L=L, tol=f"{ROW_SUM_TOL:.0e}"))
else:
    st.error(t("attn.checks_bad", layers=", ".join(str(i + 1) for i in np.nonzero(~ok)[0])))
