"""Overview: parameter breakdown with tying savings, and one block stepped through (shapes, norms, formulas)."""

import streamlit as st

import analysis
from analysis import compare
from engine.cost import active_parameter_count
from ui.compare import compared
from ui.compare_views import say
from ui.examples import language_notice
from ui.figures.compare import cap_height, share_axes
from ui.figures.overview import activation_heatmap, parameter_bar, step_norm_bar
from ui.format import DASH, number, percent
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.teaching.gate import hidden, page_shortcut, predict_first
from ui.sidebar import explorer, trace
from ui.smollm2 import parity_badge
from ui.widgets import chart, first_screen

COMPARED_PX = 360  # a compared chart's height at most in presenter mode (x 1.25 there: within the first screen)


def params_chart(side, letter: str | None = None):
    """One side's parameter table and bar chart as the single view draws them (titled with ``letter``, a side's)."""
    params = analysis.parameter_table(side.model)
    title = t("overview.params_title", total=f"{int(params['params'].sum()):,}")
    if letter:
        title = t("compare.title", side=letter.upper(), title=title)
    return params, parameter_bar(params, title, t("overview.params_x"), t("overview.params_y"))


def compare_params(pair) -> None:
    """A's and B's parameters side by side on one y range, and the sentence: the totals' ratio and the component
    that changes most."""
    drawn = {letter: params_chart(side, letter) for letter, side in pair.sides()}
    figs = [fig for _, fig in drawn.values()]
    share_axes(figs, ("y",))
    if presenter_mode():
        cap_height(figs, COMPARED_PX)
    for column, (letter, (params, fig)) in zip(st.columns(2), drawn.items()):
        with column:
            chart(fig, params, f"overview.params.{letter}", columns=2, view={"side": letter.upper()})
    table = compare.parameter_change(drawn["a"][0], drawn["b"][0])
    a, b = int(table["a"].sum()), int(table["b"].sum())
    said = [t("compare.params_sentence", ratio=number(b / a, ".3g"), a=f"{a:,}", b=f"{b:,}")]
    row = compare.largest_change(table)
    if table["change"].iloc[row] != 0:
        r = table.iloc[row]
        said.append(t("compare.params_change", part=t(f"fig.component.{r['component']}"), a=f"{int(r['a']):,}",
                      b=f"{int(r['b']):,}"))
    say(pair, said, "overview.params.a", skip=("heads",))  # heads do not align here


ctx = explorer()
pair = compared(ctx)
with first_screen(t("overview.title"), t("overview.explain")):
    language_notice(ctx)
    parity_badge(ctx, trace(ctx).logits)  # SmolLM2 only: its logits checked two ways, green or red

    # ---- parameters ----
    params, fig = params_chart(ctx)
    total = int(params["params"].sum())
    if pair is None:
        chart(fig, params, "overview.params", fill_screen=True)
    else:
        compare_params(pair)
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
saved = analysis.tying_savings(ctx.config)
if hidden("overview.params"):
    pass  # a lesson asks what tying saves: the sentence waits for the answer, like the chart
elif ctx.config.tie_word_embeddings:
    st.success(t("overview.tying_saved", saved=f"{saved:,}", v=ctx.config.vocab_size, h=ctx.config.hidden_size))
else:
    st.caption(t("overview.tying_off", saved=f"{ctx.config.vocab_size * ctx.config.hidden_size:,}"))
if ctx.config.num_local_experts and not hidden("overview.params"):  # a mixture of experts: what one token uses
    active = active_parameter_count(ctx.config)
    st.info(t("overview.active_params", active=f"{active:,}", total=f"{total:,}", share=percent(active / total),
              k=ctx.config.num_experts_per_tok, n=ctx.config.num_local_experts), icon="🔀")

# ---- one block, step by step ----
L = ctx.config.num_hidden_layers
if st.session_state.get("overview.layer", 1) > L:  # the layer count shrank: clamp, keep the key
    st.session_state["overview.layer"] = L
layer = st.slider(t("overview.layer"), 1, L, key="overview.layer", persist_state="session") if L > 1 else 1
out = trace(ctx)  # cached forward with the activation record
walk = analysis.shape_walkthrough(out, ctx.config.norm_position, layer=layer - 1)
n_steps = len(walk)
st.session_state.setdefault("overview.step", 1)
st.session_state["overview.step"] = min(max(1, int(st.session_state["overview.step"])), n_steps)


def step_name(name: str) -> str:
    """The step's label; step 1 of blocks after the first is the previous block's output, not the embedding."""
    return t(f"overview.step.{name}", prev=layer - 1) if name == "block input" else t(f"overview.step.{name}")


def step_formula(name: str) -> str:
    if name == "block input":
        return t("overview.latex.block input", prev=layer - 1, layer=layer)
    return t(f"overview.latex.{name}") if name not in ("norm 1", "norm 2") else t(f"overview.latex.{ctx.config.norm_type}")


def _move(delta: int) -> None:
    st.session_state["overview.step"] = min(max(1, st.session_state["overview.step"] + delta), n_steps)


st.subheader(t("overview.shape_title", layer=layer, n=ctx.input_ids.shape[1]))
controls = st.container(horizontal=True, vertical_alignment="center")
controls.button(t("overview.prev"), on_click=_move, args=(-1,), key="overview.prev", shortcut=page_shortcut("PageUp"),
          disabled=st.session_state["overview.step"] == 1)
controls.button(t("overview.next"), on_click=_move, args=(1,), key="overview.next", shortcut=page_shortcut("PageDown"),
          disabled=st.session_state["overview.step"] == n_steps)
step = st.session_state["overview.step"]
row = walk.iloc[step - 1]
# the keys are said only where they move the walk-through (in a lesson the clicker moves the lesson)
controls.markdown(t("overview.step_now" if page_shortcut("PageDown") else "overview.step_now_lesson", step=step,
                    n=n_steps, name=step_name(row["name"])))
st.latex(step_formula(row["name"]))
st.caption(t("overview.shape_explain"))

shown = walk.assign(name=[step_name(n) for n in walk["name"]])
if hidden("overview.step_norms"):  # the norms column is the step-norm chart's numbers: it waits with the chart
    shown = shown.drop(columns=["mean_norm"])
shown = shown.rename(columns={c: t(f"overview.col.{c}") for c in shown.columns})
norm_col = t("overview.col.mean_norm")
if hidden("overview.shapes"):  # a lesson asks about the shapes or norms: the table waits for the answer
    predict_first()
else:
    st.dataframe(
        shown.style.apply(lambda r: ["background-color: #fde68a" if r.name == step - 1 else "" for _ in r], axis=1)
        .format({norm_col: lambda v: number(v, ".4f")} if norm_col in shown.columns else {}, na_rep=DASH),
        hide_index=True, width="stretch",  # na_rep: no raw "None"
    )
norm_fig = step_norm_bar(walk, step, [step_name(n) for n in walk["name"]],
                         t("overview.norm_title"), t("overview.norm_x"), t("overview.norm_y"))
chart(norm_fig, walk, "overview.step_norms")
if row["hook"]:
    act = analysis.activation_frame(out, row["hook"])
    fig = activation_heatmap(act, ctx.tick_labels(), t("overview.act_title", name=step_name(row["name"]), hook=row["hook"]),
                             t("overview.act_x"), t("overview.act_y"), t("overview.act_value"))
    chart(fig, act.reset_index(), "overview.activation")
else:
    st.info(t("overview.no_norm_postnorm"))
with st.expander(t("overview.config")):
    st.code(ctx.config.to_json(), language="json")
