"""Layer norms: the residual stream's L2 norm by depth, what each sub-layer writes, and a depth × position map."""

import math

import streamlit as st

import analysis
from analysis import compare
from ui.compare import compared
from ui.compare_views import say
from ui.figures.compare import ratio_by_depth, share_axes
from ui.figures.common import HEATMAP_MAX_TOKENS, legend_under_title
from ui.figures.norms import residual_norm_heatmap, residual_norm_lines, sublayer_norm_bars
from ui.format import number
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.sidebar import explorer, trace
from ui.widgets import chart, first_screen, revealed



def side_lines(side, letter: str):
    """One side's residual-norm chart and table, as the single view draws them."""
    res = analysis.residual_norms(trace(side), side.tokens)
    sqrt_h = math.sqrt(side.config.hidden_size)
    placement = t(f"cfg.norm_position.{side.config.norm_position}")
    title = t("norms.residual_title", n=int(side.input_ids.shape[1]), placement=placement)
    fig = residual_norm_lines(res, depth_names(side.config.num_hidden_layers), side.tick_labels(),
                              t("compare.title", side=letter.upper(), title=title), t("norms.depth_x"),
                              t("norms.norm_y"), t("norms.mean"), sqrt_h=sqrt_h,
                              sqrt_h_name=t("norms.sqrt_h", value=f"{sqrt_h:.2f}"), positions_name=t("norms.each_position"))
    if presenter_mode():  # half the width at presenter size: the legend (told in the page's text) would cover them
        return fig.update_layout(showlegend=False), res
    return legend_under_title(fig), res  # half the width: a legend inside the plot would cover the lines


def compare_norms(pair) -> None:
    """A and B side by side on shared axes, the sentence, and B / A by depth."""
    drawn = {letter: side_lines(side, letter) for letter, side in pair.sides()}
    share_axes([fig for fig, _ in drawn.values()])
    for column, (letter, (fig, res)) in zip(st.columns(2), drawn.items()):
        with column:
            chart(fig, res, f"norms.residual.{letter}", columns=2, view={"side": letter.upper()})
    res_a, res_b = drawn["a"][1], drawn["b"][1]
    a, b = compare.last_block_norms(res_a, res_b)
    la, lb = pair.a.config.num_hidden_layers, pair.b.config.num_hidden_layers
    say(pair, [t("compare.norms_sentence", ratio=number(b / a, "#.3g"), a=number(a, "#.4g"), b=number(b, "#.4g"),
                   la=la, lb=lb)], "norms.ratio")
    table = compare.norms_by_depth(res_a, res_b)
    names = depth_names(max(la, lb))
    fig = ratio_by_depth(table, names, t("compare.norms_ratio_title"), t("norms.depth_x"), t("compare.ratio"))
    chart(fig, table.assign(stage=names), "norms.ratio")


def depth_names(L: int) -> list[str]:
    return [t("norms.tick.embed")] + [t("norms.tick.block", i=i) for i in range(1, L + 1)] + [t("norms.tick.final")]


ctx = explorer()
pair = compared(ctx)
with first_screen(t("norms.title"), t("norms.explain")):

    # ---- one cached forward; every number below comes from analysis ----
    out = trace(ctx)
    L = ctx.config.num_hidden_layers
    T = ctx.input_ids.shape[1]
    depth_labels = depth_names(L)
    sqrt_h = math.sqrt(ctx.config.hidden_size)  # L2 norm of a norm's output when its weight is 1 (bias 0)

    # ---- 1. residual norm by depth: one thin line per position, the mean in bold ----
    res = analysis.residual_norms(out, ctx.tokens)
    placement = t(f"cfg.norm_position.{ctx.config.norm_position}")
    fig = residual_norm_lines(
        res, depth_labels, ctx.tick_labels(), t("norms.residual_title", n=T, placement=placement),
        t("norms.depth_x"), t("norms.norm_y"), t("norms.mean"), sqrt_h=sqrt_h, sqrt_h_name=t("norms.sqrt_h", value=f"{sqrt_h:.2f}"),
        positions_name=t("norms.each_position"),
    )
    if pair is None:
        chart(fig, res, "norms.residual", fill_screen=True)
    else:
        compare_norms(pair)
mean = res.groupby("depth")["norm"].mean()
if revealed("norms.residual"):  # the caption reads the chart out: it waits with it (a lesson's open question)
    st.caption(t("norms.summary", embed=number(mean.iloc[0], ".4g"), last=number(mean.iloc[L], ".4g"),
                 final=number(mean.iloc[L + 1], ".4g"), sqrt_h=f"{sqrt_h:.2f}"))

# ---- 2. what each sub-layer writes into the stream ----
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
sub = analysis.sublayer_norms(out)
fig = sublayer_norm_bars(sub, {"attn_out": t("norms.attn_out"), "mlp_out": t("norms.mlp_out")}, t("norms.hover_max"),
                         t("norms.sublayer_title"), t("norms.layer_x"), t("norms.norm_y"))
chart(fig, sub, "norms.sublayer")

# ---- 3. depth × position heatmap ----
if T > HEATMAP_MAX_TOKENS:
    st.info(t("norms.heatmap_capped", n=T, cap=HEATMAP_MAX_TOKENS))
fig = residual_norm_heatmap(res, depth_labels, ctx.tick_labels(), t("norms.heatmap_title"), t("norms.position_x"),
                            t("norms.depth_x"), t("norms.colorbar"), HEATMAP_MAX_TOKENS)
chart(fig, res[res["position"] < HEATMAP_MAX_TOKENS], "norms.heatmap")
