"""The reveal's outline (``ui.teaching.highlight.highlight``): a tie outlines every tied bar, each at its own x."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.teaching.highlight import highlight


def test_a_tie_outlines_each_tied_bar_and_one_answer_one_bar():
    walk = pd.DataFrame({"step": [1, 2, 3, 4, 5], "mean_norm": [0.1, 3.99, 0.2, 0.3, 3.99]})
    fig = go.Figure(go.Bar(x=walk["step"], y=walk["mean_norm"]))
    highlight(fig, {"x": [2, 5]}, walk)
    assert sorted((s.x0 + s.x1) / 2 for s in fig.layout.shapes) == [2, 5]  # a band centred on each tied bar
    one = highlight(go.Figure(go.Bar(x=walk["step"], y=walk["mean_norm"])), {"x": 4}, walk)
    assert [(s.x0 + s.x1) / 2 for s in one.layout.shapes] == [4]
