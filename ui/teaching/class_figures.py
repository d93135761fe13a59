"""The class's answers as a bar chart (class mode): one horizontal bar per answer, the right one green after the
reveal. No names: the bars are counts."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.escape import plotly
from ui.figures.common import base_layout
from ui.i18n import t

RIGHT = "#16a34a"
WRONG = "#9ca3af"
OPEN = "#2563eb"


BAR_ROW_PX = 26  # one answer's bar (presenter mode scales the figure's height by 1.25)
BAR_TOP_PX = 12  # the figure's margins


def distribution_bar(table: pd.DataFrame, revealed: bool) -> go.Figure:
    """``table``: ``teaching.classroom.tables.choice_table`` / ``estimate_table`` (answer, students, right). Rows top to
    bottom in the table's order; before the reveal every bar has one colour (the lecturer's screen gives nothing
    away), after it the right answer is green."""
    n = len(table)
    colours = [RIGHT if (revealed and r is True) else WRONG if revealed and r is False else OPEN
               for r in table["right"]]
    total = max(int(table["students"].sum()), 1)
    fig = go.Figure(go.Bar(
        x=table["students"].tolist(), y=list(range(n)), orientation="h", marker_color=colours,
        text=[f"{int(s)} ({s / total:.0%})" for s in table["students"]], textposition="outside", cliponaxis=False,
        hovertemplate="%{customdata}: %{x}<extra></extra>", customdata=[plotly(a) for a in table["answer"]]))
    # compact: the live bar sits above the step on a 720-pixel projector; each bar says its count, so no x axis
    base_layout(fig, "", "", t("class.dist_y"), height=BAR_TOP_PX + BAR_ROW_PX * n)
    fig.update_yaxes(tickvals=list(range(n)), ticktext=[plotly(a) for a in table["answer"]], autorange="reversed",
                     title_text="")
    most = int(table["students"].max()) if n else 0
    fig.update_xaxes(range=[0, max(most * 1.3, 1)], visible=False, fixedrange=True)
    fig.update_yaxes(fixedrange=True)
    fig.update_layout(margin=dict(l=10, r=20, t=4, b=4), showlegend=False)
    return fig
