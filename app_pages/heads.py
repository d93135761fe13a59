"""Head roles & sinks: previous-token, induction, first-token and entropy scores of every head (a clickable
layers x heads map that opens the head's heatmap), then massive activations in the residual stream and the
share of attention on the first token.

Layers and heads are 1-based on this page; depths are 0 = embedding, i = after block i; positions are 0-based.
"""

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from analysis import compare, heads, massive
from analysis.trace import residual_stream
from analysis.tokenizers import special_ids
from ui.compare import compared
from ui.compare_views import difference_panel, grid_sentences, say
from ui.examples import language_notice
from ui.caches.views import repeat_attentions, role_table
from ui.controls import index_slider
from ui.figures.attention import attention_heatmap
from ui.figures.common import HEATMAP_MAX_TOKENS
from ui.figures.compare import PRESENTER_COMPARE_PX, same_height
from ui.figures.heads import role_map
from ui.figures.massive import massive_chart, sink_heatmap
from ui.format import number
from ui.i18n import labeler, t
from ui.presenter import presenter_mode
from ui.sidebar import explorer, trace
from ui.state import control, current
from ui.tokens import phrase
from ui.widgets import chart, explain, first_screen, real_model_notice, revealed

PERIOD = 50  # random tokens repeated once for the induction score (T = 2 x 50), as in TransformerLens' demo
SCORES = ("induction", "prev_token", "first_token", "entropy")
STANDS_OUT = 2.0  # a top score below this multiple of the uniform reference is "no head stands out"
MAP_KEY = "heads.map"


def _select_head(key: str = MAP_KEY) -> None:
    """on_select of the map (``key``: its chart key): move the layer/head pickers to the clicked cell."""
    points = st.session_state[key + ".chart"].selection.get("points", [])
    if points:
        st.session_state["heads.layer"] = int(points[0]["y"])
        st.session_state["heads.head"] = int(points[0]["x"])


def induction_setup(side) -> tuple[int, tuple[int, ...]]:
    """A side's induction period (at most the model's context / 2) and the token ids its repeat leaves out."""
    cfg = side.config
    limit = cfg.max_position_embeddings if cfg.has_position_limit else 2 * PERIOD
    exclude = tuple(sorted(special_ids(side.tokenizer))) if side.tokenizer is not None else ()
    return max(1, min(PERIOD, limit // 2)), exclude


def score_map(roles: pd.DataFrame, score: str, sel: tuple[int, int] | None, side: str = "",
              zmax: float | None = None):
    """The layers x heads map of ``score`` as the single view draws it; a compared ``side`` ("A", "B") gets a
    title that fits half the width and ``zmax``, the top of the entropy's scale both sides share."""
    name = t(f"heads.score.{score}")
    if side:
        title = t("compare.title", side=side, title=t("compare.roles_map_title_entropy" if score == "entropy"
                                                      else "compare.roles_map_title", score=name))
    else:
        title = t("heads.map_title_entropy") if score == "entropy" else t("heads.map_title", score=name)
    if score == "entropy":
        return role_map(roles, "entropy", title, t("heads.head_axis"), t("heads.layer_axis"), t("heads.unit_nats"),
                        zmax or float(roles["max_entropy"].iloc[0]), sel, t("heads.unit_nats"))
    return role_map(roles, score, title, t("heads.head_axis"), t("heads.layer_axis"), t("heads.unit_score"), 1.0, sel)


def role_csv(roles: pd.DataFrame) -> pd.DataFrame:
    """The map's download: every score of every head, layers and heads from 1."""
    return pd.DataFrame({t(f"heads.col.{c}"): (roles[c] + 1 if c in ("layer", "head") else roles[c])
                         for c in ("layer", "head", "prev_token", "induction", "first_token", "entropy", "text_induction")})


def compare_roles(pair, score: str, sel: tuple[int, int]) -> None:
    """Both sides' maps on one colour scale, the sentence, then A − B per head where the head counts match (the
    layers paired by relative depth where the depths differ)."""
    tables = {letter: role_table(side.model, tuple(side.input_ids[0].tolist()), *induction_setup(side))
              for letter, side in pair.sides()}
    entropy = score == "entropy"
    zmax = max(float(r["max_entropy"].iloc[0]) for r in tables.values()) if entropy else None
    grids = {letter: compare.layer_grid(roles, score) for letter, roles in tables.items()}
    figs = {}
    for letter, roles in tables.items():
        inside = sel[0] < grids[letter].shape[0] and sel[1] < grids[letter].shape[1]
        figs[letter] = score_map(roles, score, sel if inside else None, letter.upper(), zmax)
    same_height(list(figs.values()), PRESENTER_COMPARE_PX if presenter_mode() else None)
    for column, (letter, fig) in zip(st.columns(2), figs.items()):
        with column:
            chart(fig, role_csv(tables[letter]), f"{MAP_KEY}.{letter}", on_select=partial(_select_head, f"{MAP_KEY}.{letter}"),
                  columns=2, view={"side": letter.upper(), "score": score})
    name = t(f"heads.score.{score}")
    said = grid_sentences(grids["a"], grids["b"], t("compare.roles_what", score=name))
    tops = {letter: compare.top_cell(grid, lowest=entropy) for letter, grid in grids.items()}
    if all(tops.values()):
        (la, ha, a), (lb, hb, b) = tops["a"], tops["b"]
        said.append(t("compare.roles_top_entropy" if entropy else "compare.roles_top", la=la + 1, ha=ha + 1,
                      a=number(a, ".3f"), lb=lb + 1, hb=hb + 1, b=number(b, ".3f")))
    said += [t("compare.roles_missing", side=letter.upper(), score=name) for letter, top in tops.items() if top is None]
    say(pair, said, f"{MAP_KEY}.a", skip=("layers", "heads"))
    difference_panel(grids["a"], grids["b"], t("compare.roles_diff_title", score=name), f"{MAP_KEY}.diff",
                     {"score": score}, t("heads.head_axis"), t("heads.layer_axis"))


def _mag(v: float) -> str:
    """A magnitude: thousands separators when large (24,242), three significant digits when small (0.213)."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


ctx = explorer()
pair = compared(ctx)
with first_screen(t("heads.title"), t("heads.explain")):
    real_model_notice(ctx.source)
    language_notice(ctx)

    cfg = ctx.config
    L, nh, T = cfg.num_hidden_layers, cfg.num_attention_heads, int(ctx.input_ids.shape[1])
    period, exclude = induction_setup(ctx)

    bar = st.progress(0.0, text=t("heads.progress_text"))
    out = trace(ctx)
    bar.progress(0.4, text=t("heads.progress_repeat", n=period))
    rep = repeat_attentions(ctx.model, period, exclude)
    bar.progress(0.8, text=t("heads.progress_scores", cells=L * nh))
    roles = role_table(ctx.model, tuple(ctx.input_ids[0].tolist()), period, exclude)
    bar.empty()

    # ---- the map ----
    score = control(st.segmented_control, t("heads.score"), "heads.score", "induction", kind="choice",
                    options=list(SCORES), format_func=labeler("heads.score."), bind=False, required=True) or "induction"
    sel = (min(max(int(current("heads.layer", 1)), 1), L) - 1, min(max(int(current("heads.head", 1)), 1), nh) - 1)
    name = t(f"heads.score.{score}")
    if pair is None:
        chart(score_map(roles, score, sel), role_csv(roles), MAP_KEY, on_select=_select_head, fill_screen=True)
    else:
        compare_roles(pair, score, sel)

# ---- what the map shows, in words (from the numbers) ----
if pair is not None:
    st.caption(t("compare.below", side=pair.edited.upper()))
uniform = {"induction": heads.uniform_reference(2 * period, period, 2 * period - 1),
           "prev_token": heads.uniform_reference(T), "first_token": heads.uniform_reference(T)}
if score == "induction" and revealed(MAP_KEY):  # the chance level the map is read against: it waits with the map
    st.caption(t("heads.induction_note", n=period, uniform=number(uniform["induction"], ".3f")))
if revealed(MAP_KEY):  # while a lesson asks about the map, its sentence would give the answer away
    if score == "entropy":
        low = roles.sort_values(["entropy", "layer", "head"]).head(3)
        items = [t("heads.top_item", layer=r.layer + 1, head=r.head + 1, value=number(r.entropy, ".3f"))
                 for r in low.itertuples()]
        st.markdown(t("heads.entropy_sentence", heads="; ".join(items),
                      uniform=number(roles["max_entropy"].iloc[0], ".3f")))
    elif T < 2 and score != "induction":
        st.info(t("heads.too_short"))
    else:
        top = heads.top_heads(roles, score, 3)
        best = top.iloc[0]
        if not best[score] >= STANDS_OUT * uniform[score]:
            st.markdown(t("heads.none_stands_out", score=name, value=number(best[score], ".3f"),
                          layer=int(best["layer"]) + 1, head=int(best["head"]) + 1, uniform=number(uniform[score], ".3f")))
        else:
            items = [t("heads.top_item", layer=int(r["layer"]) + 1, head=int(r["head"]) + 1, value=number(r[score], ".3f"))
                     for _, r in top.iterrows()]
            st.markdown(t("heads.top_sentence", score=name, heads="; ".join(items), uniform=number(uniform[score], ".3f")))

# ---- one head ----
c1, c2 = st.columns(2)
layer = index_slider(t("heads.layer"), 1, L, "heads.layer", container=c1)
head = index_slider(t("heads.head"), 1, nh, "heads.head", container=c2)
row = roles[(roles["layer"] == layer - 1) & (roles["head"] == head - 1)].iloc[0]
st.subheader(t("heads.selected_title", layer=layer, head=head))
cols = st.columns(5)
for col, c in zip(cols, ("prev_token", "induction", "first_token", "entropy", "text_induction")):
    col.metric(t(f"heads.metric.{c}"), number(row[c], ".3f"),
               help=t("heads.text_induction_help") if c == "text_induction" else None)

labels = ctx.tick_labels()
n_draw = min(T, HEATMAP_MAX_TOKENS)
if n_draw < T:
    st.caption(t("heads.capped", n=n_draw, total=T))
pattern = out.attentions[layer - 1][0, head - 1].float().cpu().numpy()[:n_draw, :n_draw]  # (T, T)
pattern = np.where(np.triu(np.ones_like(pattern, dtype=bool), 1), np.nan, pattern)
df = pd.DataFrame(pattern, index=labels[:n_draw], columns=labels[:n_draw])
fig = attention_heatmap(df, labels[:n_draw], "softmax", t("heads.heatmap_title", layer=layer, head=head),
                        t("heads.x"), t("heads.y"), t("heads.unit_prob"))
chart(fig, df.reset_index(names=t("heads.y")), "heads.heatmap", view={"layer": layer, "head": head})

with st.expander(t("heads.repeat_title", n=period), expanded=score == "induction"):
    rp = rep[layer - 1][0, head - 1].float().cpu().numpy()  # (2n, 2n)
    rp = np.where(np.triu(np.ones_like(rp, dtype=bool), 1), np.nan, rp)
    rlabels = [str(p) for p in range(rp.shape[0])]
    fig = attention_heatmap(pd.DataFrame(rp), rlabels, "softmax", t("heads.repeat_title", n=period), t("heads.x"),
                            t("heads.y"), t("heads.unit_prob"))
    chart(fig, None, "heads.repeat")
    st.caption(t("heads.repeat_caption", n=period))

# ---- massive activations ----
st.header(t("massive.title"))
explain(t("massive.explain"))
ma = massive.massive_activations(residual_stream(out))
depth_labels = [t("massive.embed")] + [t("massive.block", n=i) for i in range(1, L + 1)]
fig = massive_chart(ma, depth_labels, t("massive.chart_title"), t("massive.x"), t("massive.y"),
                    t("massive.max_name"), t("massive.median_name"), t("massive.hover"))
ma_table = pd.DataFrame({
    t("massive.col.depth"): [depth_labels[d] for d in ma["depth"]], t("massive.col.max_abs"): ma["max_abs"],
    t("massive.col.position"): ma["position"], t("massive.col.token"): [ctx.tokens[p] for p in ma["position"]],
    t("massive.col.dim"): ma["dim"], t("massive.col.median_abs"): ma["median_abs"], t("massive.col.ratio"): ma["ratio"],
    t("massive.col.massive"): ma["massive"],
})
chart(fig, ma_table, "massive.chart")
summary = massive.massive_summary(ma)
if revealed("massive.chart"):  # the sentence and the table wait for a lesson's answer
    if summary is None:
        top = ma.loc[ma["max_abs"].idxmax()]
        st.markdown(t("massive.none", peak=_mag(top['max_abs']), depth=int(top["depth"]), position=int(top["position"]),
                      dim=int(top["dim"]), ratio=f"{top['ratio']:,.0f}"))
    else:
        pos, dim, _ = summary["places"][0]
        key = "massive.found_embed" if summary["first"] == 0 else "massive.found"
        st.markdown(t(key, first=summary["first"], last=summary["last"], count=summary["count"], position=pos, dim=dim,
                      peak=_mag(summary['peak']), peak_depth=summary["peak_depth"],
                      median_min=_mag(summary["median_min"]), median_max=_mag(summary["median_max"])))
        if len(summary["places"]) > 1:
            st.caption(t("massive.other_places", places="; ".join(t("massive.place", position=p, dim=d, n=n)
                                                                   for p, d, n in summary["places"][1:])))
    with st.expander(t("massive.table_title")):
        st.dataframe(ma_table, hide_index=True, width="stretch")

# ---- attention sinks ----
st.subheader(t("massive.sink_title"))
if T < 2:
    st.info(t("massive.too_short"))
else:
    shares = heads.first_token_shares(out.attentions)  # (L, nh)
    fig = sink_heatmap(shares, t("massive.sink_chart"), t("heads.head_axis"), t("heads.layer_axis"),
                       t("massive.sink_unit"))
    sink_df = pd.DataFrame({t("heads.col.layer"): roles["layer"] + 1, t("heads.col.head"): roles["head"] + 1,
                            t("heads.col.first_token"): roles["first_token"]})
    chart(fig, sink_df, "massive.sinks")
    li, hi = np.unravel_index(int(np.argmax(shares)), shares.shape)
    if revealed("massive.sinks"):
        st.markdown(t("massive.sinks", over=int((shares > 0.5).sum()), cells=shares.size, tok=phrase(ctx.pieces[0]),
                      mean=number(shares.mean(), ".3f"), uniform=number(uniform["first_token"], ".3f"), layer=li + 1,
                      head=hi + 1, max=number(shares[li, hi], ".3f")))
    if summary is not None and summary["places"][0][0] == 0:
        st.caption(t("massive.sink_and_massive"))
