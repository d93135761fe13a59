"""Figures of the head-roles page: a layers x heads map of one role score (clickable), and the massive
activations and first-token shares per layer. Pure ``DataFrame -> go.Figure`` builders, no Streamlit.

The role map is a heatmap with one transparent scatter point on every cell: Plotly heatmaps cannot be
selected, scatter points can, so a click on a cell selects that (layer, head) in Streamlit
(``st.plotly_chart(on_select=...)``). Layers and heads are shown 1-based.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout, f32, layer_ticks
from ui.format import cells, number

SELECT_TRACE = 1  # index of the clickable scatter trace in :func:`role_map`
HIGHLIGHT = "#d62728"


def _cell_hover(x_title: str, y_title: str) -> str:
    """Hover label of one (layer, head) cell in the page's language, from the axis titles ("layer 3, head 2")."""
    return f"{y_title} %{{y}}, {x_title} %{{x}}"


def layers_heads_heatmap(z: np.ndarray, colorscale: str, zmax: float, title: str, x_title: str, y_title: str,
                         colorbar_title: str) -> go.Figure:
    """A ``[L, nh]`` score per layer and head as a heatmap: x = head 1..nh, y = layer 1..L (layer 1 at the top),
    colour 0..zmax, the value printed in each cell up to 400 cells."""
    L, nh = z.shape
    trace = go.Heatmap(z=f32(z), x=np.arange(1, nh + 1), y=np.arange(1, L + 1), colorscale=colorscale, zmin=0.0,
                       zmax=max(zmax, 1e-9), colorbar=dict(title=dict(text=colorbar_title, side="right")),
                       hovertemplate=_cell_hover(x_title, y_title) + ": %{z:.3f}<extra></extra>")
    if L * nh <= 400:
        trace.update(text=cells(z, ".2f"), texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, y_title, height=max(320, min(900, 130 + 24 * L)))
    # explicit ranges (layer 1 at the top): the clickable markers of role_map would pad the axes to a phantom
    # layer 0 / head 0 tick
    fig.update_yaxes(range=[L + 0.5, 0.5], **layer_ticks(L), showgrid=False)
    fig.update_xaxes(range=[0.5, nh + 0.5], tick0=1, dtick=1, showgrid=False)
    return fig


def role_map(roles: pd.DataFrame, column: str, title: str, x_title: str, y_title: str, colorbar_title: str,
             zmax: float, selected: tuple[int, int] | None = None, hover_label: str = "") -> go.Figure:
    """Layers x heads heatmap of one score of ``analysis.heads.head_roles`` (layer 1 at the top).

    Args:
        roles: the roles table (0-based ``layer`` and ``head`` columns).
        column: which score to colour by (0 .. ``zmax``).
        selected: 0-based (layer, head) to outline, or None.
    Returns:
        Trace 0 = the heatmap (x = head 1..nh, y = layer 1..L); trace 1 = one invisible, clickable point per
        cell at the same coordinates (its ``customdata`` is the 0-based [layer, head]).
    """
    piv = roles.pivot(index="layer", columns="head", values=column).sort_index().sort_index(axis=1)
    z = f32(piv.to_numpy())  # (L, nh)
    L, nh = z.shape
    fig = layers_heads_heatmap(z, "Viridis", zmax, title, x_title, y_title, colorbar_title)
    fig.data[0].update(hoverinfo="skip", hovertemplate=None)  # the clickable points carry the hover
    layer, head = np.divmod(np.arange(L * nh), nh)
    points = go.Scatter(
        x=head + 1, y=layer + 1, mode="markers", customdata=np.stack([layer, head], 1), showlegend=False,
        marker=dict(size=max(6, min(28, 600 // max(L, nh))), symbol="square", color="rgba(0,0,0,0)"),
        text=[number(v, ".3f") for v in z.reshape(-1)],
        hovertemplate=_cell_hover(x_title, y_title) + f": %{{text}} {hover_label}<extra></extra>",
    )
    fig.add_trace(points)
    fig.update_layout(clickmode="event+select", dragmode=False)
    fig.update_xaxes(zeroline=False)
    fig.update_yaxes(zeroline=False)
    if selected is not None:
        lay, hd = selected
        fig.add_shape(type="rect", x0=hd + 0.5, x1=hd + 1.5, y0=lay + 0.5, y1=lay + 1.5,
                      line=dict(color=HIGHLIGHT, width=3))
    return fig
