"""Experts (MoE): the router's probabilities per token and expert in one block, the top-k chosen experts boxed,
and the load per expert (one block or all) against the even share k/E, put into a sentence.

A dense model has no router: the page says so and offers one click to the MiniMind-MoE preset (its values written
as repairs, the way a lesson step sets its preset: ui/teaching/steps.py ``apply_settings``).
"""

import streamlit as st

from analysis.experts import expert_load, load_summary, moe_layers, routed_expert_parameters, router_table
from engine.cost import active_parameter_count, parameter_count
from ui.controls import index_slider, window_slider
from ui.examples import language_notice
from ui.figures.common import mark_window
from ui.figures.experts import load_bar, router_heatmap
from ui.format import number, percent
from ui.i18n import t
from settings.schema import preset_values
from ui.sidebar import explorer, trace
from ui.state import FIXED_KEY, control, repair, set_controls
from ui.widgets import chart, first_screen, revealed
from ui.window import rows_that_fit

MOE_PRESET = "minimind_moe"
ROUTER_PX = 600  # the router heatmap's plot height at its tallest outside presenter mode (ui/figures/experts.py)
ROUTER_PRESENTER_PX = 120  # and in presenter mode, under a lesson's banner (the page's head is its title and a row)


def _use_moe_preset() -> None:
    """on_click: the MiniMind-MoE preset's sidebar values and fixed fields, at random init, the input kept.

    Written as repairs (applied by the sidebar before any widget of the run that follows the click) and as the
    session's control values, as a lesson step's preset is."""
    values = {k: v for k, v in preset_values(MOE_PRESET).items() if not k.startswith("input.")}
    fixed = values.pop(FIXED_KEY)
    values.update({"cfg.preset": MOE_PRESET, "model.source": "random"})
    set_controls(values)
    repair(FIXED_KEY, fixed)


ctx = explorer()
config = ctx.config
with first_screen(t("experts.title"), t("experts.explain")):
    language_notice(ctx)
    if not config.num_local_experts:
        st.info(t("experts.dense"))
        st.button(t("experts.use_preset"), key="experts.use_preset", on_click=_use_moe_preset, type="primary",
                  icon="🔀")
        st.stop()

    out = trace(ctx)
    layers = moe_layers(out)
    L = len(layers)
    n, k = config.num_local_experts, config.num_experts_per_tok
    c1, c2 = st.columns(2)
    shown = index_slider(t("experts.layer"), 1, L, "experts.layer", default=1, container=c1,
                         help=t("experts.layer_help"))
    layer = layers[shown - 1]  # 0-based block of the shown router
    table = router_table(out, layer)
    T = int(ctx.input_ids.shape[1])
    # the tokens drawn: as many rows as fit at a readable height (numbers in the cells), the last first
    lo, hi = window_slider(t("experts.start"), T, "experts.start", ROUTER_PX, "experts.router",
                           help=t("experts.start_help", n=rows_that_fit(ROUTER_PX)), container=c2,
                           presenter_px=ROUTER_PRESENTER_PX)
    if hi - lo < T:
        st.caption(t("experts.shown", p0=lo, p1=hi - 1, T=T - 1))
    shown_rows = table[table["position"].between(lo, hi - 1)].assign(position=lambda d: d["position"] - lo)
    fig = router_heatmap(shown_rows, ctx.tick_labels()[lo:hi], t("experts.heat_title", layer=layer + 1, n=n, k=k),
                         t("experts.heat_x", k=k), t("experts.heat_y"), t("experts.colorbar"), t("experts.chosen", k=k))
    mark_window(fig, y0=lo)  # a lesson's outline names a position: counted from the window's first row
    chart(fig, table, "experts.router", fill_screen=True, view={"layer": layer + 1})

how = t("experts.how.renorm") if config.norm_topk_prob else t("experts.how.raw")
st.caption(t("experts.heat_caption", n=n, k=k, how=how))
if config.shared_expert_intermediate_size:
    st.caption(t("experts.shared", width=config.shared_expert_intermediate_size))

# ---- load per expert ----
st.subheader(t("experts.load_heading"))
scope = control(st.segmented_control, t("experts.scope.label"), "experts.scope", "layer", kind="choice",
                options=["layer", "all"], format_func=lambda s: t(f"experts.scope.{s}", layer=layer + 1, n=L))
load = expert_load(out, layer if scope == "layer" else None)
summary = load_summary(load, k)
scope_text = t(f"experts.scope.{scope}", layer=layer + 1, n=L)
uniform_text = t("experts.uniform", k=k, n=n, share=percent(summary["uniform"]))
fig = load_bar(load, summary["uniform"], t("experts.load_title", scope=scope_text),
               t("experts.load_x", k=k, n=n, share=percent(summary["uniform"])), t("experts.load_y"), uniform_text)
chart(fig, load, "experts.load", view={"layer": layer + 1} if scope == "layer" else None)
if revealed("experts.load"):  # it reads the chart out: it waits with it while a lesson asks
    if summary["spread"] < 1e-12:
        st.markdown(t("experts.even", uniform=percent(summary["uniform"])))
    else:
        st.markdown(t("experts.sentence", most=summary["most"] + 1, most_share=percent(summary["most_share"]),
                      most_ratio=number(summary["most_ratio"], ".2f"), uniform=percent(summary["uniform"]),
                      least=summary["least"] + 1, least_share=percent(summary["least_share"]),
                      least_ratio=number(summary["least_ratio"], ".2f"), k=k))
    if summary["idle"]:
        st.markdown(t("experts.idle", n=summary["idle"], total=n))
    st.caption(t("experts.aux", aux=number(summary["aux_loss"], ".3f"), k=k))
    total, active = parameter_count(config), active_parameter_count(config)
    st.caption(t("experts.params", active=f"{active:,}", total=f"{total:,}", share=percent(active / total),
                 experts=f"{routed_expert_parameters(ctx.model):,}"))
