"""Norm placement: the same weights under Pre-Norm, Post-Norm, the sandwich (Gemma 2/3) and OLMo-2's order, on the
same input, up to 48 layers; the model's own placement first.

Reference: Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (gradient norms by depth
at initialisation; why Pre-Norm trains without warm-up).
"""

import math

import numpy as np
import pandas as pd
import streamlit as st

import analysis
from engine import ModelConfig
from engine.cost import gradient_cost
from server.budget import verdict
from ui.budget import refuse_over_budget
from analysis.prepost import NORM_SLOTS, PLACEMENTS, norms_at_init
from ui.caches.views import depth_sweep, gradients, placement_comparison
from ui.figures.prepost import depth_scaling_lines, divergence_lines, gradient_norm_lines, placement_norm_lines
from ui.format import number
from ui.i18n import t
from ui.profile import profile_sentence
from ui.sidebar import MAX_LAYERS, build_model, explorer, presenter_mode
from ui.state import control
from ui.compare import one_side_note
from ui.widgets import chart, first_screen, on_request, revealed, when_asked


SCALING_DEPTHS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48)  # the scaling chart's L values (log-spaced)


def depth_scaling(config: ModelConfig, seed: int, ids: tuple[int, ...], depths: tuple[int, ...]) -> pd.DataFrame | None:
    """The last block's gradient norm at every depth, four placements per depth, shared by every session: drawn
    at once when some session computed it, else computed (with a progress bar) only once this session asked
    for it: a button, so that the page's other charts never wait for its dozens of models. None: not yet."""
    args = (config.to_json(), seed, ids, depths)
    found, table = depth_sweep.peek(*args)
    if found:
        return table
    if not when_asked("prepost.scaling", math.inf, t("prepost.scaling_on_request", n=len(depths), lo=depths[0],
                                                      hi=depths[-1]), t("prepost.scaling_run", n=len(depths))):
        return None  # its dozens of models always wait for the button
    bar = st.progress(0.0, text=t("prepost.scaling_computing", n=len(depths)))
    table = depth_sweep(*args, _progress=lambda f: bar.progress(f, text=t("prepost.scaling_computing", n=len(depths))))
    bar.empty()
    return table


def scaling_depths(config: ModelConfig, tokens: int) -> tuple[int, ...]:
    """Depths of the scaling chart: from 2 (at L = 1 the last block is also the first) up to 48, each one only
    when building and differentiating it fits the server's budget (engine/cost.py)."""
    return tuple(L for L in SCALING_DEPTHS
                 if all(verdict(a, config.replace(num_hidden_layers=L), tokens=tokens).ok for a in ("build", "gradient")))


ctx = explorer()
own = ctx.config.norm_position
names = {p: t(f"cfg.norm_position.{p}") for p in (own, *(p for p in PLACEMENTS if p != own))}  # own first
legend = {**names, own: t("prepost.own", name=names[own])}  # the legend marks this model's own placement
with first_screen(t("prepost.title"), t("prepost.explain")):
    one_side_note()
    if ctx.source != "random":  # trained weights were shaped by one placement; the others are a what-if
        st.warning(t("prepost.trained_placement_short" if presenter_mode() else "prepost.trained_placement",
                     placement=names[own]))

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
        norms, drift = placement_comparison(model, ids)  # the four placements on the model's weights: one forward each

    if not (np.isfinite(norms.drop(columns="depth").to_numpy()).all()
            and np.isfinite(drift[["cosine", "rel_l2"]].to_numpy()).all()):
        st.warning(t("prepost.nonfinite", parts=t("prepost.part.divergence")))

    # ---- 1. norm by depth, every placement ----
    depth_labels = [t("prepost.tick.embed")] + [t("prepost.tick.block", i=i) for i in range(1, depth + 1)]
    sqrt_h = math.sqrt(ctx.config.hidden_size)
    fig = placement_norm_lines(norms, depth_labels, legend, t("prepost.norm_title", n=T), t("prepost.depth_x"),
                               t("prepost.norm_y"), sqrt_h=sqrt_h, sqrt_h_name=t("prepost.sqrt_h", value=f"{sqrt_h:.2f}"))
    chart(fig, norms, "prepost.norms", fill_screen=True)  # presenter mode: the rest of the first screen


def extremes(values: dict[str, float]) -> tuple[str, str] | None:
    """The placements with the largest and the smallest value, or None unless every value is finite and positive."""
    if not values or not all(math.isfinite(v) and v > 0 for v in values.values()):
        return None
    return max(values, key=values.get), min(values, key=values.get)


def norm_sentence() -> str:
    """What the norms chart shows at the last block: every placement's value and which one grew the most."""
    first, last = norms.iloc[0], norms.iloc[-1]
    growth = {p: float(last[f"{p}_norm"] / first[f"{p}_norm"]) for p in names}
    ends = extremes(growth)
    if ends is None:
        return ""
    top, low = ends
    values = t("prepost.sep").join(t("prepost.value", value=number(last[f"{p}_norm"], ".3g"), name=names[p]) for p in names)
    key = "prepost.norm_measured" if growth[top] > 1 else "prepost.norm_measured_none"
    return t(key, embed=number(first[f"{own}_norm"], ".3g"), layers=depth, values=values, top=names[top],
             low=names[low], growth=number(growth[top], ".3g"), low_growth=number(growth[low], ".3g"),
             ratio=number(growth[top] / growth[low], ".3g"))


if revealed("prepost.norms"):  # every sentence reading a chart out waits with it (a lesson's open question)
    st.markdown(norm_sentence())
fresh = [t("prepost.fresh_item", name=names[p], k=len(norms_at_init(own, p)), n=len(NORM_SLOTS[p]))
         for p in names if norms_at_init(own, p)]
st.caption(t("prepost.same_weights", fresh=t("prepost.sep").join(fresh) or t("prepost.fresh_none"))
           + (" " + t("prepost.fresh_random") if ctx.source == "random" else ""))

# ---- 2. drift from the model's own placement, per depth ----
drift_shown = drift.assign(cosine=drift["cosine"].clip(-1.0, 1.0))  # float64 round-off can give 1 + 1e-16
fig = divergence_lines(drift_shown, depth_labels, names, t("prepost.div_title", own=names[own]),
                       t("prepost.cosine_title"), t("prepost.cosine_y"),
                       t("prepost.rel_title"), t("prepost.rel_y"), t("prepost.depth_x"))
chart(fig, drift_shown, "prepost.divergence")
at_last = drift_shown[drift_shown["depth"] == depth].set_index("placement")
cosines = at_last["cosine"].to_dict()
if revealed("prepost.divergence") and len(cosines) >= 2 and all(math.isfinite(v) for v in cosines.values()):
    near, far = max(cosines, key=cosines.get), min(cosines, key=cosines.get)
    st.markdown(t("prepost.div_measured", layers=depth, own=names[own], near=names[near], far=names[far],
                  near_cos=number(cosines[near], ".3f"), far_cos=number(cosines[far], ".3f"),
                  near_rel=number(at_last.loc[near, "rel_l2"], ".3g"), far_rel=number(at_last.loc[far, "rel_l2"], ".3g")))

# ---- 3. gradient norms per layer (Xiong et al. 2020): after the charts of the forwards are drawn ----
def gradient_section() -> None:
    """The gradient norms of every placement: at once on a small model, on request on a large one (a forward and a
    backward per placement: SmolLM2's are a dozen forwards' work)."""
    if T < 2:
        st.info(t("prepost.need_two"))
        return
    gflop = len(names) * gradient_cost(model.config, T).gflop  # one forward and backward per placement
    grads = on_request(gradients, (model, ids), "prepost.grads", gflop,
                       t("prepost.grads_on_request", gflop=number(gflop, ".3g")), t("prepost.grads_run"),
                       spinner=t("prepost.computing_grads", depth=depth))
    if grads is None:
        return
    if not np.isfinite(grads["grad_norm"].to_numpy()).all():
        st.warning(t("prepost.nonfinite", parts=t("prepost.part.gradients")))
    group_labels = ([t("prepost.tick.embed")] + [t("prepost.tick.block", i=i) for i in range(1, depth + 1)]
                    + [t("prepost.tick.final_head")])
    fig = gradient_norm_lines(grads, group_labels, legend, t("prepost.grad_title"), t("prepost.grad_x"),
                              t("prepost.grad_y"))
    chart(fig, grads, "prepost.gradients")
    if ctx.config.tie_word_embeddings:
        st.caption(t("prepost.tied_head"))
    g = {k: grads[(grads["placement"] == k) & grads["layer"].between(0, depth - 1)].sort_values("layer")["grad_norm"]
         .tolist() for k in names}
    sentences = [profile_sentence(names[k], g[k]) for k in names]
    ends = extremes({k: v[-1] for k, v in g.items()})
    if revealed("prepost.gradients") and all(sentences) and ends is not None:
        top, low = ends
        st.markdown(t("prepost.measured", layers=depth) + " " + " ".join(sentences) + " "
                    + t("prepost.last_ratio", layers=depth, top=names[top], low=names[low],
                        ratio=number(g[top][-1] / g[low][-1], ".2g")))


gradient_section()


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
    if scaling is None:  # not computed yet: the button waits for the lecturer or student to ask
        return
    pts = {k: scaling[scaling["placement"] == k].sort_values("layers") for k in names}
    c = analysis.inverse_sqrt_reference(pts["pre"]["layers"], pts["pre"]["grad_norm"])
    fig = depth_scaling_lines(scaling, legend, c, t("prepost.scaling_ref", c=number(c, ".3g")),
                              t("prepost.scaling_title"), t("prepost.scaling_x"), t("prepost.scaling_y"))
    chart(fig, scaling, "prepost.scaling")
    slope = {k: analysis.power_law_fit(d["layers"], d["grad_norm"])[0] for k, d in pts.items()}
    change = {k: float(d["grad_norm"].iloc[-1] / d["grad_norm"].iloc[0]) for k, d in pts.items()}
    if not all(math.isfinite(v) for v in [*slope.values(), *change.values()]):
        st.warning(t("prepost.nonfinite", parts=t("prepost.part.gradients")))
    elif revealed("prepost.scaling"):  # the sentence reads the chart out: it waits with it while a lesson asks
        top, low = max(slope, key=slope.get), min(slope, key=slope.get)
        fits = t("prepost.fit_sep").join(t("prepost.scaling_fit", name=names[k], slope=number(slope[k], "+.2f"),
                           change=number(change[k], ".2g")) for k in names)
        st.markdown(t("prepost.scaling_measured", lo=depths[0], hi=depths[-1], seed=seed, fits=fits,
                      sqrt_change=number(math.sqrt(depths[0] / depths[-1]), ".2g"), top=names[top], low=names[low],
                      spread=number(change[top] / change[low], ".2g")))
    st.caption(t("prepost.scaling_caption", lo=depths[0], hi=depths[-1]))


scaling_section()
