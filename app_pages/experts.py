"""Experts (MoE): the router's probabilities per token and expert in one block, the top-k chosen experts boxed,
and the load per expert (one block or all) against the even share k/E, put into a sentence.

A dense model has no router: the page says so and offers one click to the MiniMind-MoE preset (its values written
as repairs, the way a lesson step sets its preset: ui/teaching/steps.py ``apply_settings``).
"""

import streamlit as st

from analysis import compare
from analysis.experts import expert_load, load_summary, moe_layers, routed_expert_parameters, router_table
from engine.cost import active_parameter_count, parameter_count
from ui.compare import compared
from ui.compare_views import say, side_by_side
from ui.controls import index_slider, window_slider
from ui.examples import language_notice
from ui.figures.common import mark_window
from ui.figures.compare import PRESENTER_COMPARE_PX, difference_line, same_height, share_axes
from ui.figures.experts import load_bar, router_heatmap
from ui.format import number, percent
from ui.i18n import t
from settings.schema import preset_values
from ui.sidebar import explorer, trace
from ui.state import FIXED_KEY, control, repair, set_controls
from ui.presenter import presenter_mode
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


def side_load(side, shown: int, scope: str, letter: str = ""):
    """One side's ``(load, chart, summary)`` of its ``shown``-th MoE block (or all, ``scope`` "all"), as the single
    view draws them (a compared side's title starts with its letter); a sentence where it has no such block."""
    cfg = side.config
    if not cfg.num_local_experts:
        return t("compare.experts_dense", side=letter)
    out = trace(side)
    layers = moe_layers(out)
    if shown > len(layers):
        return t("compare.experts_no_block", side=letter, n=len(layers), shown=shown)
    layer = layers[shown - 1]
    n, k = cfg.num_local_experts, cfg.num_experts_per_tok
    load = expert_load(out, layer if scope == "layer" else None)
    summary = load_summary(load, k)
    title = t("experts.load_title", scope=t(f"experts.scope.{scope}", layer=layer + 1, n=len(layers)))
    fig = load_bar(load, summary["uniform"], t("compare.title", side=letter, title=title) if letter else title,
                   t("experts.load_x", k=k, n=n, share=percent(summary["uniform"])), t("experts.load_y"),
                   t("experts.uniform", k=k, n=n, share=percent(summary["uniform"])))
    return load, fig, summary


def compare_load(pair, shown: int, scope: str) -> None:
    """Both sides' load per expert on one y axis, the sentence, and A − B per expert where the counts match."""
    drawn = {letter: side_load(side, shown, scope, letter.upper()) for letter, side in pair.sides()}
    figs = [got[1] for got in drawn.values() if not isinstance(got, str)]
    share_axes(figs, ("y",))
    same_height(figs, PRESENTER_COMPARE_PX if presenter_mode() else None)
    side_by_side(pair, drawn, "experts.load", {"block": shown} if scope == "layer" else {})
    if len(figs) < 2:
        return
    (load_a, _, sa), (load_b, _, sb) = drawn["a"], drawn["b"]
    said = [t("compare.experts_sentence", ma=percent(sa["most_share"]), ea=sa["most"] + 1,
              ra=number(sa["most_ratio"], ".2f"), ua=percent(sa["uniform"]), mb=percent(sb["most_share"]),
              eb=sb["most"] + 1, rb=number(sb["most_ratio"], ".2f"), ub=percent(sb["uniform"]),
              xa=number(sa["aux_loss"], ".3f"), xb=number(sb["aux_loss"], ".3f"))]
    table = compare.load_difference(load_a, load_b)
    if table is None:
        said.append(t("compare.experts_counts", a=len(load_a), b=len(load_b)))
    say(pair, said, "experts.load.a", skip=("vocab", "layers", "heads", "tokens"))  # the sentence says the counts
    if table is not None:
        shown_table = table.assign(expert=table["expert"] + 1, difference=table["difference"] * 100)
        fig = difference_line(shown_table, "expert", t("compare.experts_diff_title"), t("compare.col.expert"),
                              t("compare.experts_diff_y"), bars=True)
        chart(fig, table.assign(expert=table["expert"] + 1), "experts.load_diff")


ctx = explorer()
config = ctx.config
pair = compared(ctx)
with first_screen(t("experts.title"), t("experts.explain")):
    language_notice(ctx)
    if not config.num_local_experts:
        st.info(t("experts.dense"))
        st.button(t("experts.use_preset"), key="experts.use_preset", on_click=_use_moe_preset, type="primary",
                  icon="🔀")
        if pair is not None:  # the other side may route: its load is drawn (this one says it has none)
            st.subheader(t("experts.load_heading"))
            compare_load(pair, 1, "layer")
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
    if pair is not None:
        st.caption(t("compare.experts_one_side", side=pair.edited.upper()))

how = t("experts.how.renorm") if config.norm_topk_prob else t("experts.how.raw")
st.caption(t("experts.heat_caption", n=n, k=k, how=how))
if config.shared_expert_intermediate_size:
    st.caption(t("experts.shared", width=config.shared_expert_intermediate_size))

# ---- load per expert ----
st.subheader(t("experts.load_heading"))
scope = control(st.segmented_control, t("experts.scope.label"), "experts.scope", "layer", kind="choice",
                options=["layer", "all"], format_func=lambda s: t(f"experts.scope.{s}", layer=layer + 1, n=L))
load, fig, summary = side_load(ctx, shown, scope)
if pair is None:
    chart(fig, load, "experts.load", view={"layer": layer + 1} if scope == "layer" else None)
else:
    compare_load(pair, shown, scope)
    st.caption(t("compare.below", side=pair.edited.upper()))
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
