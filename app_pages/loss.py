"""Loss & masking: which targets are supervised, what each position contributes to the mean loss, and why
generation only needs the last position's logits (``logits_to_keep``).

Positions are 0-based. Row t of the table predicts token t+1 from the tokens up to t; masking token p (label
-100 at p) removes row p-1, so masking the first N tokens as a prompt removes rows 0 .. N-2.
"""

import math

import numpy as np
import pandas as pd
import streamlit as st

import analysis
from engine.cost import forward_flops
from analysis import compare
from engine.loss import mask_positions, mask_prompt
from ui.compare import compared
from ui.compare_views import say
from ui.examples import language_notice
from ui.caches.views import keep_check
from ui.controls import index_slider
from ui.figures.compare import cap_height, ratio_by_position, share_axes, thin_ticks, union_range
from ui.figures.loss import contribution_bar
from ui.format import DASH, finite, number, scientific
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.teaching.gate import hidden, predict_first
from ui.sidebar import explorer, trace
from ui.state import control, current
from ui.tokens import phrase
from ui.widgets import chart, first_screen, on_request, screen_heading

KEEP_ATOL = 1e-5  # kept and full logits agree within float32 rounding
KEEP_RTOL = 1e-5  # ... which grows with the logits' size (a trained model's reach ~30): about 80 float32 ulps
COMPARED_PX = 340  # a compared chart's height at most in presenter mode (x 1.25 there: within the first screen)
COMPARED_TICKS = 8  # position labels on a chart at half the width


def side_losses(side, prompt_len: int, masked: list[int]):
    """One side's labels, forward and loss table as the single view computes them (the page's mask cut to the
    side's length)."""
    T = int(side.input_ids.shape[1])
    lab = mask_positions(mask_prompt(side.input_ids, min(prompt_len, T)), [p for p in masked if p < T])
    out = trace(side, lab)
    return lab, out, analysis.loss_table(out, side.input_ids, lab, side.tokens)


def _where(pair, p: int) -> str:
    """Position ``p`` of the loss table named by its input and target (each side's when their tokens differ)."""
    names = [t("compare.loss_tokens", inp=phrase(s.pieces[p]), tgt=phrase(s.pieces[p + 1])) for _, s in pair.sides()]
    if names[0] == names[1]:
        return t("compare.loss_where", p=p, tokens=names[0])
    return t("compare.loss_where_two", p=p, a=names[0], b=names[1])


def compare_losses(pair, prompt_len: int, masked: list[int]) -> None:
    """A's and B's contributions side by side on one y range, the sentence, then B / A of each position's loss
    over the positions both have."""
    tables = {letter: side_losses(side, prompt_len, masked)[2] for letter, side in pair.sides()}
    figs = {}
    for letter, df in tables.items():
        n = int((~df["masked"]).sum())
        if n:
            figs[letter] = contribution_bar(df, t("compare.title", side=letter.upper(), title=t("compare.loss_title", n=n)),
                                            t("loss.bar_x"), t("loss.bar_y"), t("loss.masked_hover"))
    share_axes(list(figs.values()), ("y",))
    union_range(list(figs.values()))  # position p at the same place on both sides
    thin_ticks(list(figs.values()), COMPARED_TICKS)
    if presenter_mode():
        cap_height(list(figs.values()), COMPARED_PX)
    for column, (letter, side) in zip(st.columns(2), pair.sides()):
        with column:
            if letter in figs:
                chart(figs[letter], tables[letter], f"loss.contrib.{letter}", columns=2, view={"side": letter.upper()})
            else:
                st.info(t("compare.side_note", side=letter.upper(), note=t(
                    "loss.none_supervised" if len(tables[letter]) else "loss.too_short", n=len(tables[letter]))))
    by_position = compare.loss_by_position(tables["a"], tables["b"])
    a, b = compare.mean_loss(tables["a"]), compare.mean_loss(tables["b"])
    change = compare.largest_loss_change(by_position)
    said = [t("compare.loss_sentence", ratio=number(b / a, "#.3g"), a=number(a, "#.4g"), b=number(b, "#.4g"))
            if finite(a) and finite(b) and a > 0 else t("compare.loss_none")]
    if change is not None:
        said.append(t("compare.loss_change", where=_where(pair, change.position), a=number(change.a, "#.4g"),
                      b=number(change.b, "#.4g")))
    say(pair, said, "loss.contrib.a", skip=("heads",))  # heads do not align here
    n = len(by_position)
    if change is None:
        return
    same = compare.same_tokens(pair.a.tokens, pair.b.tokens, n + 1)  # each row's input and target
    rows = tables["a"][["position", "input_token", "target_token"]].head(n).itertuples(index=False)
    names = [f"{p}: {i}→{o}" for p, i, o in rows] if same else [str(p) for p in range(n)]
    fig = ratio_by_position(by_position, names, t("compare.loss_ratio_title"), t("loss.bar_x"),
                            t("compare.loss_ratio_y"))
    if presenter_mode():
        cap_height([fig], COMPARED_PX)
    chart(fig, by_position, "loss.ratio")
    if not same:
        st.caption(t("compare.other_tokens"))
    if n < max(len(tables["a"]), len(tables["b"])):
        st.caption(t("compare.loss_cut", last=n - 1, ta=len(tables["a"]), tb=len(tables["b"])))


ctx = explorer()
pair = compared(ctx)
with first_screen(t("loss.title"), t("loss.explain")):
    language_notice(ctx)

    T = int(ctx.input_ids.shape[1])
    labels = ctx.tick_labels()
    if T < 2:
        st.info(t("loss.too_short"))
        st.stop()

    # ---- which targets are supervised ----
    screen_heading(t("loss.mask_title"))
    c1, c2 = st.columns(2)
    prompt_len = index_slider(t("loss.prompt_len"), 0, T, "loss.prompt_len", container=c1, help=t("loss.prompt_help"))
    chosen = current("loss.masked", []) or []
    valid = [p for p in chosen if isinstance(p, int) and 1 <= p < T]
    if valid != list(chosen):
        st.session_state["loss.masked"] = valid
        c2.caption("⚠️ " + t("loss.masked_dropped", dropped=", ".join(str(p) for p in chosen if p not in valid)))
    toggled = control(c2.multiselect, t("loss.masked"), "loss.masked", [], kind="multi", options=list(range(1, T)),
                      format_func=lambda p: labels[p] if 0 <= p < T else str(p), help=t("loss.masked_help"),
                      placeholder=t("loss.masked_placeholder"))

    lab, out, df = side_losses(ctx, prompt_len, toggled)  # lab (1, T): input_ids, -100 where masked
    N = int((~df["masked"]).sum())

    # ---- per-position contributions (first: the chart starts high on a projector) ----
    screen_heading(t("loss.per_pos_title"))
    if pair is not None:
        compare_losses(pair, prompt_len, toggled)
    elif N > 0:
        fig = contribution_bar(df, t("loss.bar_title", n=N), t("loss.bar_x"), t("loss.bar_y"), t("loss.masked_hover"))
        chart(fig, df, "loss.contrib", fill_screen=True)
    st.caption(t("loss.bar_caption"))
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
view = pd.DataFrame({
    t("loss.col.position"): df["position"],
    t("loss.col.input"): df["input_token"],
    t("loss.col.target"): [f"{p + 1}: {tok}" for p, tok in zip(df["position"], df["target_token"])],
    t("loss.col.masked"): [t("loss.masked_yes") if m else "" for m in df["masked"]],
    t("loss.col.loss"): [number(v, ".4f") for v in df["loss"]],
    t("loss.col.share"): [number(v, ".1%") for v in df["share"]],
})
masked_rows = df["masked"].to_numpy()
styled = view.style.apply(lambda row: ["background-color: #e6e6e6; color: #777" if masked_rows[row.name] else ""
                                       for _ in row], axis=1)
if not hidden("loss.contrib"):  # a lesson asks how many targets count or what the loss is: wait for the answer
    st.dataframe(styled, hide_index=True, width="stretch")
if N == 0:
    st.caption(t("loss.table_all_masked"))

st.caption(t("loss.labels_caption") + " `" + ", ".join(str(v) for v in lab[0].tolist()[:64])
           + (" …" if T > 64 else "") + "`")

# ---- the formula with its numbers ----
st.subheader(t("loss.formula_title"))
if hidden("loss.contrib"):
    predict_first()
elif N == 0:
    st.warning(t("loss.none_supervised", n=T - 1))
else:
    total = float(np.nansum(df["loss"]))
    mean = float(out.loss)
    st.latex(r"\mathcal{L} = \frac{1}{N} \sum_{t\,\in\,\text{" + t("loss.latex_supervised") + r"}} \ell_t"
             rf" = \frac{{{total:.4f}}}{{{N}}} = {mean:.4f}" if math.isfinite(mean) else
             r"\mathcal{L} = \frac{1}{N} \sum_{t} \ell_t")
    st.caption(t("loss.formula_caption", n=N, total=T - 1, masked=T - 1 - N))
    m1, m2, m3 = st.columns(3)
    m1.metric(t("loss.metric_loss"), number(mean, ".4f"))
    m2.metric(t("loss.metric_n"), f"{N} / {T - 1}")
    m3.metric(t("loss.metric_ppl"), number(math.exp(mean), ".1f") if finite(mean) and mean < 700 else DASH)

# ---- logits_to_keep ----
def keep_section() -> None:
    """``logits_to_keep``: the kept logits against the full ones. Two forwards (the full and the kept run): at once on
    a small model, on request on a large one."""
    st.subheader(t("loss.keep_title"))
    st.markdown(t("loss.keep_explain"))
    k = index_slider(t("loss.keep"), 1, T, "loss.keep", default=1, bind=False)
    gflop = 2 * forward_flops(ctx.config, T) / 1e9  # the full forward and the kept one
    res = on_request(keep_check, (ctx.model, tuple(ctx.input_ids[0].tolist()), k), "loss.keep_check", gflop,
                     t("loss.keep_on_request", gflop=number(gflop, ".3g")), t("loss.keep_run"))
    if res is None:
        return
    V = ctx.config.vocab_size
    if hidden("loss.keep"):  # a lesson asks for the kept logits' shape: the numbers wait for the answer
        predict_first()
    else:
        k1, k2, k3 = st.columns(3)
        k1.metric(t("loss.keep_shape"), str(res["kept_shape"]))
        k2.metric(t("loss.full_shape"), str(res["full_shape"]))
        k3.metric(t("loss.keep_diff"), scientific(res["max_abs_diff"]))
        if res["equal"]:
            st.success(t("loss.keep_equal", k=k))
        elif res["max_abs_diff"] <= (keep_tol := max(KEEP_ATOL, KEEP_RTOL * res["scale"])):
            st.success(t("loss.keep_close", k=k, diff=number(res["max_abs_diff"], ".1e"), tol=f"{keep_tol:.0e}"))
        else:
            st.error(t("loss.keep_differ", diff=number(res["max_abs_diff"], ".1e")))
        st.caption(t("loss.keep_saving", full=f"{T * V:,}", kept=f"{res['kept_shape'][1] * V:,}",
                     flops=f"{(T - res['kept_shape'][1]) * V * ctx.config.hidden_size:,}"))


keep_section()
