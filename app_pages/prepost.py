"""Pre-Norm vs Post-Norm: the same weights under both placements, on the same input, up to 48 layers.

Reference: Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (gradient norms by depth
at initialisation; why Pre-Norm trains without warm-up).
"""

import math

import numpy as np
import pandas as pd
import streamlit as st

import analysis
from engine import ModelConfig
from server.budget import verdict
from ui.budget import refuse_over_budget
from ui.caches.views import divergence, gradients, last_block_gradient, placement_pair
from ui.figures.prepost import depth_scaling_lines, divergence_lines, gradient_norm_lines, placement_norm_lines
from ui.format import number
from ui.i18n import t
from ui.profile import profile_sentence
from ui.sidebar import MAX_LAYERS, build_model, explorer, presenter_mode
from ui.state import control
from ui.widgets import chart, first_screen


SCALING_DEPTHS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48)  # the scaling chart's L values (log-spaced)


def depth_scaling(config: ModelConfig, seed: int, ids: tuple[int, ...], depths: tuple[int, ...]) -> pd.DataFrame:
    """The last block's gradient norm at every depth, one cached model pair per depth, with a progress bar."""
    bar = st.progress(0.0, text=t("prepost.scaling_computing", n=len(depths)))
    parts = []
    for k, L in enumerate(depths):
        parts.append(last_block_gradient(config.to_json(), seed, ids, L))
        bar.progress((k + 1) / len(depths), text=t("prepost.scaling_computing", n=len(depths)))
    bar.empty()
    return pd.concat(parts, ignore_index=True)


def scaling_depths(config: ModelConfig, tokens: int) -> tuple[int, ...]:
    """Depths of the scaling chart: from 2 (at L = 1 the last block is also the first) up to 48, each one only
    when building and differentiating it fits the server's budget (engine/cost.py)."""
    return tuple(L for L in SCALING_DEPTHS
                 if all(verdict(a, config.replace(num_hidden_layers=L), tokens=tokens).ok for a in ("build", "gradient")))


ctx = explorer()
with first_screen(t("prepost.title"), t("prepost.explain")):
    if ctx.config.norm_position not in ("pre", "post"):  # sandwich / post_sublayer: other norms, other weights
        st.info(t("prepost.other_placement", placement=t(f"cfg.norm_position.{ctx.config.norm_position}")))
        st.stop()
    if ctx.source != "random":  # trained weights were shaped by one placement; the other is a what-if
        st.warning(t("prepost.trained_placement_short" if presenter_mode() else "prepost.trained_placement",
                     placement=t(f"cfg.norm_position.{ctx.config.norm_position}")))

    # ---- depth control: this page only; defaults to (and follows) the sidebar's layers until moved ----
    L_sidebar = ctx.config.num_hidden_layers
    ss = st.session_state
    last_seen = ss.get("prepost.sidebar_layers")
    if "prepost.depth" not in ss or (last_seen is not None and last_seen != L_sidebar and ss["prepost.depth"] == last_seen):
        ss["prepost.depth"] = L_sidebar
    ss["prepost.depth"] = min(max(int(ss["prepost.depth"]), 1), MAX_LAYERS)  # clamp (never crash on a stale value)
    ss["prepost.sidebar_layers"] = L_sidebar
    if ctx.source != "random":  # a checkpoint or a model trained in this session cannot be rebuilt at another depth
        depth = L_sidebar
        st.caption(t("prepost.depth.fixed", layers=L_sidebar))
    else:
        depth = int(control(st.slider, t("prepost.depth.label"), "prepost.depth", L_sidebar, kind="int", lo=1,
                            hi=MAX_LAYERS, bind=False, help=t("prepost.depth.help")))
        if depth != L_sidebar:
            st.caption(t("prepost.depth.note", depth=depth, layers=L_sidebar))

    ids = tuple(ctx.input_ids[0].tolist())
    T = len(ids)
    for action in ("build", "gradient"):  # engine/cost.py: the depth slider reaches 48 layers
        refuse_over_budget(action, ctx.config.replace(num_hidden_layers=depth), tokens=T)
    with st.spinner(t("prepost.computing", depth=depth)):
        if depth == L_sidebar:
            model = ctx.model
        else:  # same config and seed, other depth: the sidebar's cached builder (never mutated)
            model = build_model(ctx.config.replace(num_hidden_layers=depth).to_json(), int(ss["cfg.seed"]))
        pre, post = placement_pair(model)
        div = divergence(pre, post, ids)
        grads = gradients(pre, post, ids) if T >= 2 else None

    names = {"pre": t("cfg.norm_position.pre"), "post": t("cfg.norm_position.post")}
    other = "post" if ctx.config.norm_position == "pre" else "pre"
    bad = []
    if not np.isfinite(div[["pre_norm", "post_norm", "cosine", "rel_l2"]].to_numpy()).all():
        bad.append(t("prepost.part.divergence"))
    if grads is not None and not np.isfinite(grads["grad_norm"].to_numpy()).all():
        bad.append(t("prepost.part.gradients"))
    if bad:
        st.warning(t("prepost.nonfinite", parts=", ".join(bad)))

    # ---- 1. norm by depth, both placements ----
    depth_labels = [t("prepost.tick.embed")] + [t("prepost.tick.block", i=i) for i in range(1, depth + 1)]
    sqrt_h = math.sqrt(ctx.config.hidden_size)
    fig = placement_norm_lines(div, depth_labels, names, t("prepost.norm_title", n=T), t("prepost.depth_x"),
                               t("prepost.norm_y"), sqrt_h=sqrt_h, sqrt_h_name=t("prepost.sqrt_h", value=f"{sqrt_h:.2f}"))
    chart(fig, div, "prepost.norms", fill_screen=True)  # presenter mode: the rest of the first screen
st.caption(t("prepost.same_weights", other=names[other]))

# ---- 2. divergence per depth ----
div_shown = div.assign(cosine=div["cosine"].clip(-1.0, 1.0))  # float64 round-off can give 1 + 1e-16
fig = divergence_lines(div_shown, depth_labels, t("prepost.div_title"), t("prepost.cosine_title"),
                       t("prepost.cosine_y"), t("prepost.rel_title"), t("prepost.rel_y"), t("prepost.depth_x"))
chart(fig, div_shown, "prepost.divergence")

# ---- 3. gradient norms per layer (Xiong et al. 2020) ----
if grads is None:
    st.info(t("prepost.need_two"))
else:
    group_labels = ([t("prepost.tick.embed")] + [t("prepost.tick.block", i=i) for i in range(1, depth + 1)]
                    + [t("prepost.tick.final_head")])
    fig = gradient_norm_lines(grads, group_labels, names, t("prepost.grad_title"), t("prepost.grad_x"), t("prepost.grad_y"))
    chart(fig, grads, "prepost.gradients")
    if ctx.config.tie_word_embeddings:
        st.caption(t("prepost.tied_head"))
    g = {k: grads[(grads["placement"] == k) & grads["layer"].between(0, depth - 1)].sort_values("layer")["grad_norm"]
         .tolist() for k in ("pre", "post")}
    sentences = [profile_sentence(names[k], g[k]) for k in ("pre", "post")]
    if all(sentences):
        ratio = g["post"][-1] / g["pre"][-1]
        st.markdown(t("prepost.measured", layers=depth) + " " + " ".join(sentences) + " "
                    + t("prepost.last_ratio", layers=depth, ratio=number(ratio, ".2g")))

# ---- 4. Xiong et al. 2020, Theorem 1: the last block's gradient against depth ----
def scaling_section() -> None:
    st.subheader(t("prepost.scaling_header"))
    st.markdown(t("prepost.xiong"))
    if ctx.source != "random":
        st.info(t("prepost.scaling_random_only"))
        return
    if T < 2:
        st.info(t("prepost.need_two"))
        return
    depths = scaling_depths(ctx.config, T)
    if len(depths) < 2:
        st.info(t("prepost.scaling_budget"))
        return
    seed = int(ss["cfg.seed"])
    scaling = depth_scaling(ctx.config, seed, ids, depths)
    pts = {k: scaling[scaling["placement"] == k].sort_values("layers") for k in ("pre", "post")}
    c = analysis.inverse_sqrt_reference(pts["pre"]["layers"], pts["pre"]["grad_norm"])
    fig = depth_scaling_lines(scaling, names, c, t("prepost.scaling_ref", c=number(c, ".3g")),
                              t("prepost.scaling_title"), t("prepost.scaling_x"), t("prepost.scaling_y"))
    chart(fig, scaling, "prepost.scaling")
    slope = {k: analysis.power_law_fit(d["layers"], d["grad_norm"])[0] for k, d in pts.items()}
    change = {k: float(d["grad_norm"].iloc[-1] / d["grad_norm"].iloc[0]) for k, d in pts.items()}
    if all(math.isfinite(v) for v in [*slope.values(), *change.values()]):
        st.markdown(t("prepost.scaling_measured", lo=depths[0], hi=depths[-1], seed=seed,
                      pre_slope=number(slope["pre"], "+.2f"), post_slope=number(slope["post"], "+.2f"),
                      pre_change=number(change["pre"], ".2g"), post_change=number(change["post"], ".2g"),
                      sqrt_change=number(math.sqrt(depths[0] / depths[-1]), ".2g")))
    else:
        st.warning(t("prepost.nonfinite", parts=t("prepost.part.gradients")))
    st.caption(t("prepost.scaling_caption", lo=depths[0], hi=depths[-1]))


scaling_section()
