"""RoPE up close: a q/k pair's planes turning with the position, each plane's wavelength for the current
``rope_theta``, a measured check that a rotated pair's score depends only on m − n, and a real head's score
against distance for its recorded (rotated) q and k.

A model without RoPE gets the first three for the default base and its head dimension, and a sentence saying so.
Layers and heads are 1-based on this page; planes and positions 0-based (as in the formula θ_i = θ^(−2i/d)).
"""

import math

import streamlit as st

from analysis import compare, rope
from ui.compare import compared
from ui.compare_views import say, side_by_side
from ui.controls import index_slider
from ui.examples import language_notice
from ui.figures.compare import (PRESENTER_COMPARE_PX, difference_line, ratio_by_depth, same_height, share_axes,
                                share_log_axis)
from ui.figures.rope import distance_chart, relative_heatmap, rotation_chart, wavelength_chart
from ui.format import number, scientific, significant
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.sidebar import explorer, trace
from ui.state import control, register_params
from ui.widgets import chart, first_screen, revealed

DEFAULT_POSITIONS = 16  # positions 0 .. P on the rotation chart: plane 0 goes round about 2.5 times
MAX_POSITIONS = 256  # plane d/4 (θ_i = θ^(-1/2)) turns visibly by then
CHECK_POSITIONS = 48  # the m − n check's grid: positions 0 .. 47 for both q and k (2,304 pairs)
CHECK_SEED = 0
ROUNDING = 1e-4  # a spread under this share of the score's range is float32 rounding (measured: ~1e-6)
STILL = 0.1  # rad: a plane that turns less over the whole context (under 6°) is nearly constant there


def _theta(value: float) -> str:
    """A RoPE base as people write it: 10,000, 1,000,000, 150,000."""
    return f"{value:,.0f}" if value >= 1 else significant(value)


def wave_view(side, letter: str = ""):
    """One side's wavelength table and chart, as the single view draws them (a compared side's title starts with
    its letter)."""
    rcfg = rope.rope_config(side.config)
    bases, context = rope.rope_bases(rcfg), int(side.config.max_position_embeddings)
    waves = rope.wavelengths(rcfg, bases, context)
    T = int(side.input_ids.shape[1])
    names = [t("rope.base_name", theta=_theta(bases[0]))] + [t("rope.base_local", theta=_theta(b)) for b in bases[1:]]
    title = t("rope.wave_chart", half=rcfg.head_dim // 2, d=rcfg.head_dim)
    fig = wavelength_chart(waves, names, t("compare.title", side=letter, title=title) if letter else title,
                           t("rope.wave_x"), t("rope.wave_y"), context, t("rope.context_name", n=f"{context:,}"), T,
                           t("rope.input_name", n=T), t("rope.wave_hover"))
    return waves, fig


def head_view(side, layer: int, head: int, letter: str = ""):
    """One side's score-by-distance table and chart of this head, as the single view draws them."""
    scores = rope.head_scores_by_distance(trace(side), layer - 1, head - 1, rope.attention_scale(side.config))
    title = t("rope.head_chart", layer=layer, head=head)
    fig = distance_chart(scores, t("compare.title", side=letter, title=title) if letter else title, t("rope.head_x"),
                         t("rope.head_y"), t("rope.mean_name"), t("rope.band_name"), t("rope.head_hover"))
    return scores, fig


def compare_waves(pair) -> None:
    """Both sides' wavelengths on shared axes (log y), the sentence, and B / A plane by plane where the head widths
    match."""
    drawn = {letter: wave_view(side, letter.upper()) for letter, side in pair.sides()}
    figs = [fig for _, fig in drawn.values()]
    share_axes(figs, ("x",))
    share_log_axis(figs, "y")
    same_height(figs, PRESENTER_COMPARE_PX if presenter_mode() else None)
    if presenter_mode():  # half the width at presenter size: the legend would cover the lines (the sentence names them)
        for fig in figs:
            fig.update_layout(showlegend=False)
    side_by_side(pair, drawn, "rope.wavelength", {})
    said = []
    for letter, side in pair.sides():
        if side.config.position_embedding != "rope":
            rcfg = rope.rope_config(side.config)
            said.append(t("compare.rope_not_used", side=letter.upper(), d=rcfg.head_dim, theta=_theta(rcfg.rope_theta),
                          position=t(f"cfg.position_embedding.{side.config.position_embedding}")))
    mains = {letter: w[w["base"] == w["base"].iloc[0]] for letter, (w, _) in drawn.items()}
    contexts = {letter: int(side.config.max_position_embeddings) for letter, side in pair.sides()}
    slow = {letter: float(m["wavelength"].max()) for letter, m in mains.items()}
    said.insert(0, t("compare.rope_waves", sa=significant(slow["a"]), sb=significant(slow["b"]),
                     ratio=significant(slow["b"] / slow["a"]), ta=_theta(mains["a"]["base"].iloc[0]),
                     tb=_theta(mains["b"]["base"].iloc[0]), ha=len(mains["a"]), hb=len(mains["b"]),
                     ca=int((mains["a"]["wavelength"] <= contexts["a"]).sum()),
                     cb=int((mains["b"]["wavelength"] <= contexts["b"]).sum()), na=f"{contexts['a']:,}",
                     nb=f"{contexts['b']:,}"))
    table = compare.plane_ratio(drawn["a"][0], drawn["b"][0])
    if table is None:
        said.append(t("compare.rope_planes", a=len(mains["a"]), b=len(mains["b"])))
    say(pair, said, "rope.wavelength.a", skip=("vocab", "layers", "heads", "tokens"))  # the sentence says the planes
    if table is not None:
        fig = ratio_by_depth(table, [str(i) for i in table["plane"]], t("compare.rope_ratio_title"), t("rope.wave_x"),
                             t("compare.ratio"))
        chart(fig, table, "rope.wave_ratio")


def compare_head(pair, layer: int, head: int) -> None:
    """Both sides' score by distance of this head on shared axes (a side without RoPE or without the head: its
    sentence), the sentence, and A − B by distance where both are drawn."""
    drawn = {}
    for letter, side in pair.sides():
        cfg = side.config
        if cfg.position_embedding != "rope":
            drawn[letter] = t("compare.rope_head_none", side=letter.upper(),
                              position=t(f"cfg.position_embedding.{cfg.position_embedding}"))
        elif layer > cfg.num_hidden_layers or head > cfg.num_attention_heads:
            drawn[letter] = t("compare.no_head", side=letter.upper(), layer=layer, head=head, L=cfg.num_hidden_layers,
                              nh=cfg.num_attention_heads)
        else:
            drawn[letter] = head_view(side, layer, head, letter.upper())
    figs = [got[1] for got in drawn.values() if not isinstance(got, str)]
    share_axes(figs)
    same_height(figs, PRESENTER_COMPARE_PX if presenter_mode() else None)
    side_by_side(pair, drawn, "rope.head", {"layer": layer, "head": head})
    if len(figs) < 2:
        return
    sa, sb = drawn["a"][0], drawn["b"][0]
    best = {letter: got[0].loc[got[0]["mean"].idxmax()] for letter, got in drawn.items()}
    say(pair, [t("compare.rope_head_sentence", layer=layer, head=head, a0=number(sa["mean"].iloc[0], ".3f"),
                 b0=number(sb["mean"].iloc[0], ".3f"), da=int(best["a"]["distance"]), va=number(best["a"]["mean"], ".3f"),
                 db=int(best["b"]["distance"]), vb=number(best["b"]["mean"], ".3f"))], "rope.head.a",
        skip=("layers", "heads"))
    table = compare.distance_difference(sa, sb)
    fig = difference_line(table, "distance", t("compare.rope_diff_title", layer=layer, head=head), t("rope.head_x"),
                          t("compare.diff_unit"))
    chart(fig, table, "rope.head_diff", view={"layer": layer, "head": head})


register_params("rope.positions", "rope.layer", "rope.head")
ctx = explorer()
pair = compared(ctx)
cfg = ctx.config
uses_rope = cfg.position_embedding == "rope"
rcfg = rope.rope_config(cfg)  # cfg itself, or cfg as if it used plain RoPE with the default base
d, half = rcfg.head_dim, rcfg.head_dim // 2
theta = float(rcfg.rope_theta)
position_name = t(f"cfg.position_embedding.{cfg.position_embedding}")

with first_screen(t("rope.title"), t("rope.explain")):
    if not uses_rope:
        short = "_short" if presenter_mode() else ""  # one line in presenter mode: the chart gets the screen
        st.info(t("rope.no_rope" + short, position=position_name, theta=_theta(theta), d=d))
    elif cfg.rope_type == "yarn":
        st.caption(t("rope.yarn", factor=significant(cfg.rope_factor), original=cfg.rope_original_max_position_embeddings))
    last = int(control(st.slider, t("rope.positions"), "rope.positions", DEFAULT_POSITIONS, kind="int", lo=1,
                       hi=MAX_POSITIONS))
    planes = rope.planes_to_show(d)
    path = rope.rotation_path(rcfg, planes, last)
    freq = path.groupby("plane", sort=False)["theta_i"].first()
    fig = rotation_chart(path, [t("rope.plane_title", i=i, freq=significant(freq[i])) for i in planes],
                         t("rope.rotation_title", last=last, theta=_theta(theta)), t("rope.position_bar"),
                         t("rope.rotation_hover"))
    chart(fig, path, "rope.rotation", fill_screen=True)
    if pair is not None:
        st.caption(t("compare.rope_one_side", side=pair.edited.upper()))

if revealed("rope.rotation"):  # it reads the chart out: it waits with it while a lesson asks
    end = path[path["position"] == last].set_index("plane")
    if len(planes) == 1:
        st.markdown(t("rope.rotation_one", last=last, angle=significant(end["angle"].iloc[0]),
                      turns=significant(end["turns"].iloc[0])))
    else:
        items = t("rope.item_sep").join(t("rope.rotation_item", i=i, angle=significant(end.loc[i, "angle"]),
                                          turns=significant(end.loc[i, "turns"])) for i in planes)
        st.markdown(t("rope.rotation_sentence", last=last, items=items, ratio=significant(freq[planes[0]] / freq[planes[-1]]),
                      wave=significant(2 * math.pi / freq[planes[-1]])))

# ---- 2. the wavelength of each plane ----
st.subheader(t("rope.wave_title"))
bases = rope.rope_bases(rcfg)
context = int(cfg.max_position_embeddings)
T = int(ctx.input_ids.shape[1])
waves = rope.wavelengths(rcfg, bases, context)
st.latex(rf"\theta_i = {theta:.0f}^{{-2i/{d}}}, \qquad \lambda_i = \frac{{2\pi}}{{\theta_i}}, \qquad i = 0 \dots {half - 1}")
if pair is None:
    chart(wave_view(ctx)[1], waves, "rope.wavelength")
else:
    compare_waves(pair)
    st.caption(t("compare.below", side=pair.edited.upper()))
main = waves[waves["base"] == bases[0]]
if revealed("rope.wavelength"):  # it reads the chart out: it waits with it while a lesson asks
    fast, slow = float(main["wavelength"].min()), float(main["wavelength"].max())
    turning = int((main["wavelength"] <= context).sum())
    if slow > context:  # the slowest plane's whole angle over positions 0 .. context - 1, read from the chart's θ_i
        step = float(main["theta_i"].min())
        angle = (context - 1) * step
        st.markdown(t("rope.wave_still" if angle < STILL else "rope.wave_long", theta=_theta(bases[0]), turning=turning,
                      half=half, context=f"{context:,}", fast=significant(fast), slow=significant(slow),
                      ratio=significant(slow / context), last=f"{context - 1:,}", angle=significant(angle),
                      degrees=significant(math.degrees(angle)), step=significant(step)))
    else:
        st.markdown(t("rope.wave_all", theta=_theta(bases[0]), half=half, context=f"{context:,}", fast=significant(fast),
                      slow=significant(slow)))
    for base in bases[1:]:
        st.caption(t("rope.local_note", theta=_theta(base),
                     slow=significant(float(waves[waves["base"] == base]["wavelength"].max()))))

# ---- 3. the score depends only on m − n ----
st.subheader(t("rope.check_title"))
if pair is not None:
    st.caption(t("compare.rope_one_side", side=pair.edited.upper()))
check = rope.relative_check(rcfg, CHECK_POSITIONS, CHECK_SEED)
fig = relative_heatmap(check, t("rope.check_chart", last=CHECK_POSITIONS - 1), t("rope.check_x"), t("rope.check_y"),
                       t("rope.check_bar"), t("rope.check_hover"))
chart(fig, check, "rope.check")
spread = rope.relative_spread(check)
share = spread["spread"] / spread["range"] if spread["range"] > 0 else math.inf
key = "rope.check_ok" if share <= ROUNDING else "rope.check_bad"
if revealed("rope.check"):  # it reads the chart out: it waits with it while a lesson asks
    st.markdown(t(key, pairs=f"{spread['pairs']:,}", distances=spread["distances"], spread=scientific(spread["spread"]),
                  distance=spread["distance"], range=number(spread["range"], ".3f"), share=scientific(share)))

# ---- 4. a real head: score against distance ----
st.subheader(t("rope.head_title"))
if pair is not None:  # the sliders reach every layer and head of either side; a side without one says so
    c1, c2 = st.columns(2)
    layer = index_slider(t("rope.layer"), 1, max(s.config.num_hidden_layers for _, s in pair.sides()), "rope.layer",
                         container=c1)
    head = index_slider(t("rope.head"), 1, max(s.config.num_attention_heads for _, s in pair.sides()), "rope.head",
                        container=c2)
    compare_head(pair, layer, head)
elif not uses_rope:
    st.info(t("rope.head_no_rope", position=position_name))
else:
    if ctx.source == "random":
        st.warning(t("rope.random_head"))
    elif ctx.source == "trained":
        st.info(t("rope.trained_head"))
    language_notice(ctx)
    L, nh = cfg.num_hidden_layers, cfg.num_attention_heads
    c1, c2 = st.columns(2)
    layer = index_slider(t("rope.layer"), 1, L, "rope.layer", container=c1)
    head = index_slider(t("rope.head"), 1, nh, "rope.head", container=c2)
    scores, fig = head_view(ctx, layer, head)
    chart(fig, scores, "rope.head", view={"layer": layer, "head": head})
    if T < 2:
        st.info(t("rope.head_short"))
    else:
        if revealed("rope.head"):  # it reads the chart out: it waits with it while a lesson asks
            best, worst = scores.loc[scores["mean"].idxmax()], scores.loc[scores["mean"].idxmin()]
            st.markdown(t("rope.head_sentence", layer=layer, head=head, theta=_theta(rope.layer_theta(cfg, layer - 1)),
                          sqrt_d=significant(rope.attention_scale(cfg) ** -1), n=T, best=int(best["distance"]),
                          best_v=number(best["mean"], ".3f"), worst=int(worst["distance"]),
                          worst_v=number(worst["mean"], ".3f"), zero=number(scores["mean"].iloc[0], ".3f")))
        st.caption(t("rope.head_pairs", n=T))
