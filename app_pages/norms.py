"""Layer norms: the residual stream's L2 norm by depth, what each sub-layer writes, and a depth × position map."""

import math

import streamlit as st

import analysis
from ui.figures.common import HEATMAP_MAX_TOKENS
from ui.figures.norms import residual_norm_heatmap, residual_norm_lines, sublayer_norm_bars
from ui.format import number
from ui.i18n import t
from ui.sidebar import explorer, trace
from ui.widgets import chart, first_screen, revealed

ctx = explorer()
with first_screen(t("norms.title"), t("norms.explain")):

    # ---- one cached forward; every number below comes from analysis ----
    out = trace(ctx)
    L = ctx.config.num_hidden_layers
    T = ctx.input_ids.shape[1]
    depth_labels = [t("norms.tick.embed")] + [t("norms.tick.block", i=i) for i in range(1, L + 1)] + [t("norms.tick.final")]
    sqrt_h = math.sqrt(ctx.config.hidden_size)  # L2 norm of a norm's output when its weight is 1 (bias 0)

    # ---- 1. residual norm by depth: one thin line per position, the mean in bold ----
    res = analysis.residual_norms(out, ctx.tokens)
    placement = t(f"cfg.norm_position.{ctx.config.norm_position}")
    fig = residual_norm_lines(
        res, depth_labels, ctx.tick_labels(), t("norms.residual_title", n=T, placement=placement),
        t("norms.depth_x"), t("norms.norm_y"), t("norms.mean"), sqrt_h=sqrt_h, sqrt_h_name=t("norms.sqrt_h", value=f"{sqrt_h:.2f}"),
        positions_name=t("norms.each_position"),
    )
    chart(fig, res, "norms.residual", fill_screen=True)
mean = res.groupby("depth")["norm"].mean()
if revealed("norms.residual"):  # the caption reads the chart out: it waits with it (a lesson's open question)
    st.caption(t("norms.summary", embed=number(mean.iloc[0], ".4g"), last=number(mean.iloc[L], ".4g"),
                 final=number(mean.iloc[L + 1], ".4g"), sqrt_h=f"{sqrt_h:.2f}"))

# ---- 2. what each sub-layer writes into the stream ----
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
