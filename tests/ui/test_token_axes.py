"""Token axes of the charts, checked on the figure objects: every token labelled up to 64 (on positions, token text
as tick text, so a repeated token keeps its own row), every 2nd one above that with the hover naming each token;
type that fits its rows in presenter mode; and the Pre vs Post and Layer norms charts of issue 22 (a log axis when
the placements differ by orders of magnitude, the √H label off the tick labels, the final-norm marker inside the
axis range)."""

import math

import numpy as np
import pandas as pd
import pytest

from ui.figures.attention import attention_heatmap
from ui.figures.common import LABEL_EVERY_TOKEN, MIN_TICK_PX, THEME_TICK_PX, scale_fonts
from ui.figures.generate import query_row_heatmap
from ui.figures.loss import contribution_bar
from ui.figures.norms import residual_norm_lines
from ui.figures.prepost import placement_norm_lines


def labels(n: int) -> list[str]:
    """Position-prefixed token labels with repeats ("the" at every 3rd position), as ``Explorer.tick_labels``."""
    return [f"{i} {'the' if i % 3 == 0 else f'w{i}'}" for i in range(n)]


def heatmap(n: int):
    z = np.tril(np.full((n, n), 1.0 / n, dtype=np.float32))
    z[np.triu_indices(n, 1)] = np.nan
    return attention_heatmap(pd.DataFrame(z), labels(n), "softmax", "t", "key", "query", "p")


@pytest.mark.parametrize("n", [43, LABEL_EVERY_TOKEN])
def test_every_token_is_labelled_up_to_64(n):
    fig = heatmap(n)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert list(axis.tickvals) == list(range(n))  # positions, one tick each (the old code: every 2nd above 40)
        assert list(axis.ticktext) == labels(n)
        assert MIN_TICK_PX <= axis.tickfont.size < THEME_TICK_PX  # smaller type, one label per row
    assert fig.layout.xaxis.tickangle == -90  # columns upright: a label per column fits
    np.testing.assert_array_equal(fig.data[0].x, np.arange(n))


def test_above_64_every_2nd_label_and_the_hover_names_each_token():
    n = 128
    fig = heatmap(n)
    assert list(fig.layout.yaxis.tickvals) == list(range(0, n, 2))
    assert list(fig.layout.yaxis.ticktext) == labels(n)[::2]
    cd = fig.data[0].customdata
    assert len(cd) == n and all(len(row) == n for row in cd)
    assert all(list(cd[i][j]) == [labels(n)[i], labels(n)[j]] for i in (0, 3, 77, 127) for j in (0, 5, 64, 127))
    assert "%{customdata[0]}" in fig.data[0].hovertemplate and "%{customdata[1]}" in fig.data[0].hovertemplate


def test_presenter_fits_token_labels_to_their_rows_and_keeps_few_large():
    dense = scale_fonts(heatmap(43), 1.5, height=420)
    plot_h = 420 - 190
    assert MIN_TICK_PX <= dense.layout.yaxis.tickfont.size <= max(MIN_TICK_PX, plot_h / 43)
    few = scale_fonts(heatmap(6), 1.5, height=420)
    assert few.layout.yaxis.tickfont.size == few.layout.xaxis.tickfont.size == round(THEME_TICK_PX * 1.5)


def test_query_row_and_loss_bars_name_tokens_in_the_hover():
    S = 86  # a 22-token prompt plus 64 decode steps
    row = pd.DataFrame({"key_position": np.arange(S), "weight": np.full(S, 1.0 / S)})
    fig = query_row_heatmap(row, labels(S), 22, "t", "x", "query", "w")
    assert list(fig.data[0].customdata[0]) == labels(S) and "%{customdata}" in fig.data[0].hovertemplate
    assert list(fig.layout.xaxis.tickvals) == list(range(0, S, 2))
    n = 30
    df = pd.DataFrame({"position": np.arange(n), "input_token": [f"a{i}" for i in range(n)],
                       "target_token": [f"b{i}" for i in range(n)], "masked": [False] * n, "loss": np.ones(n),
                       "contribution": np.full(n, 1.0 / n), "share": np.full(n, 1.0 / n)})
    bars = contribution_bar(df, "t", "x", "y", "masked")
    assert list(bars.layout.xaxis.tickvals) == list(range(n)) and bars.layout.xaxis.tickangle == -90
    assert [c[0] for c in bars.data[0].customdata] == [f"{p}: a{p}→b{p}" for p in range(n)]


def prepost_frame(pre, post) -> pd.DataFrame:
    return pd.DataFrame({"depth": np.arange(len(pre)), "pre_norm": pre, "post_norm": post})


def test_pre_vs_post_uses_a_log_axis_when_the_placements_differ_by_orders_of_magnitude():
    L, H = 30, 576  # SmolLM2: Pre-Norm grows to ~1,100, Post-Norm stays at sqrt(576) = 24
    pre = np.r_[1.0, np.linspace(40, 1100, L)]
    post = np.r_[1.0, np.full(L, 24.0)]
    depth_labels = ["embed"] + [f"block {i}" for i in range(1, L + 1)]
    fig = placement_norm_lines(prepost_frame(pre, post), depth_labels, {"pre": "Pre", "post": "Post"}, "t", "x", "y",
                               sqrt_h=math.sqrt(H), sqrt_h_name="√H = 24.00")
    assert fig.layout.yaxis.type == "log"
    # the √H label is a legend entry of its dotted line, not text on the plot over the lines or the block-30 tick
    assert not fig.layout.annotations
    (ref,) = [tr for tr in fig.data if tr.name == "√H = 24.00"]
    assert list(ref.y) == [24.0, 24.0] and ref.line.dash == "dot"
    # the same weights, a random model at init: both lines within a factor of 10 -> linear from 0
    near = placement_norm_lines(prepost_frame(np.r_[1.0, np.full(L, 6.0)], np.r_[1.0, np.full(L, 24.0)]),
                                depth_labels, {"pre": "Pre", "post": "Post"}, "t", "x", "y")
    assert near.layout.yaxis.type != "log" and near.layout.yaxis.rangemode == "tozero"


def test_layer_norms_final_norm_marker_inside_its_axis_range():
    """H = 768, L = 12 (GPT-2 small's shape), Pre-Norm at init: every position's final norm is sqrt(768) = 27.7."""
    L, H, T = 12, 768, 8
    rows = []
    for depth in range(L + 2):
        for p in range(T):
            norm = math.sqrt(H) if depth == L + 1 else 0.5 + 0.3 * depth + 0.01 * p
            rows.append(dict(depth=depth, stage="", position=p, token=f"t{p}", norm=norm))
    df = pd.DataFrame(rows)
    depth_labels = ["embed"] + [f"block {i}" for i in range(1, L + 1)] + ["final norm"]
    fig = residual_norm_lines(df, depth_labels, [f"{p}" for p in range(T)], "t", "x", "y", "mean",
                              sqrt_h=math.sqrt(H), sqrt_h_name="√H = 27.71", positions_name="each")
    lo, hi = fig.layout.yaxis2.range
    marker_px = fig.data[T + 2].marker.size  # the mean's marker: its half height must fit below the top
    plot_px = fig.layout.height - 160
    assert lo <= 0 and hi >= math.sqrt(H) * (1 + marker_px / plot_px)


def test_generate_charts_keep_their_legend_off_the_title_on_a_phone():
    """Issue 22 (leftover): on a 390 x 844 phone the Generate page's chart titles ran into their legends (a
    horizontal legend above the plot sits on the title's line, and grows up into it when it wraps)."""
    from analysis.generation import memory_table
    from engine import ModelConfig
    from ui.figures.common import PHONE_PLOT_PX, text_width
    from ui.figures.generate import cache_bars, filter_bars, memory_bars

    growth = pd.DataFrame({"layer": [1, 1, 2, 2], "source": ["prefill", "decode"] * 2, "positions": [22, 3, 22, 3]})
    stages = {"softmax": "softmax (raw)", "temperature": "after temperature", "top_k": "after top-k",
              "top_p": "after top-p", "min_p": "after min-p"}
    table = pd.DataFrame([dict(rank=r, token=f"t{r}", stage=s, probability=0.1) for r in (1, 2) for s in stages])
    config = ModelConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=128)
    figs = [cache_bars(growth, {"prefill": "prefill (prompt)", "decode": "decode (generated)"}, "Cached", "x", "y"),
            filter_bars(table, stages, "Top tokens", "x", "y"),
            memory_bars(memory_table(config, "this model", seq_len=256, bytes_per_value=4), "KV", "x", "y")]
    for fig in figs:
        title, legend = fig.layout.title, fig.layout.legend
        assert title.yref == "container" and title.yanchor == "top"  # the title's own row at the very top
        assert legend.yanchor == "bottom" and legend.y >= 1.0  # the legend just above the plot, below the title
        names = [tr.name for tr in fig.data if tr.name]
        per_row = max(1, int(PHONE_PLOT_PX // max(40 + text_width(n, THEME_TICK_PX + 2) for n in names)))
        rows = -(-len(names) // per_row)  # at least this many rows on a phone's plot width
        assert fig.layout.margin.t >= 1.4 * 18 + 1.5 * 14 * rows, (names, fig.layout.margin.t)
