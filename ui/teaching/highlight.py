"""A lesson's reveal: the part of a chart the answer is about, outlined (a bar, a row, a column or one cell)."""

from __future__ import annotations

import numbers

import pandas as pd
import plotly.graph_objects as go

HIGHLIGHT_LINE = "#d97706"  # amber: the reveal's colour on every chart
HIGHLIGHT_FILL = "rgba(251, 191, 36, 0.22)"


def _coord(values, value, data: pd.DataFrame | None, n: int):
    """Where ``value`` sits on an axis plotting ``values`` (None: 0..n-1), and the half width of its band.

    ``value`` is one of the plotted values, or a value of a column of the chart's ``data`` (its row's position),
    or a coordinate itself."""
    vals = list(values) if values is not None else list(range(n))
    index = None
    if value in vals:
        index = vals.index(value)
    elif data is not None:
        for col in data.columns:
            hits = [i for i, v in enumerate(data[col].tolist()) if v == value]
            if hits and hits[0] < len(vals):
                index = hits[0]
                break
    if index is None:
        if not isinstance(value, numbers.Number):
            return None
        c = float(value)
    else:
        c = vals[index]
        if not isinstance(c, numbers.Number):
            return float(index), 0.5  # a category: its slot
    nums = sorted({float(v) for v in vals if isinstance(v, numbers.Number)})
    steps = [b - a for a, b in zip(nums, nums[1:]) if b > a]
    return float(c), (min(steps) / 2 if steps else 0.5)


def highlight(fig: go.Figure, spec: dict, data: pd.DataFrame | None = None) -> go.Figure:
    """Outline ``spec``'s part of the first trace: ``{"x": ...}`` a band across the plot at that x, ``{"y": ...}``
    one at that y, both: one cell; ``{"x": [a, b]}`` a band at each (a tie). A figure whose x value sits on another
    panel says where in its ``layout.meta["highlight_x"]`` (``{str(value): {"axis": "x2", "at": 0}}``: the Layer
    norms chart's final norm). Returns the same figure."""
    if not fig.data or not spec:
        return fig
    if isinstance(spec.get("x"), (list, tuple)):  # several answers tie: each is outlined
        for x in spec["x"]:
            highlight(fig, {**spec, "x": x}, data)
        return fig
    style = dict(line=dict(color=HIGHLIGHT_LINE, width=4), fillcolor=HIGHLIGHT_FILL, layer="above")
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    x = spec.get("x")
    x = int(x) if isinstance(x, numbers.Number) and float(x).is_integer() else x  # 4, 4.0 or numpy's 4: "4"
    elsewhere = (meta.get("highlight_x") or {}).get(str(x))
    if elsewhere is not None and "y" not in spec:
        at = float(elsewhere["at"])
        fig.add_shape(type="rect", xref=elsewhere["axis"], yref="paper", x0=at - 0.5, x1=at + 0.5, y0=0, y1=1, **style)
        return fig
    tr = fig.data[0]
    z, xs, ys = (getattr(tr, a, None) for a in ("z", "x", "y"))
    nx = len(z[0]) if z is not None and len(z) else (len(xs) if xs is not None else 0)
    ny = len(z) if z is not None else (len(ys) if ys is not None else 0)
    shift = meta.get("window")  # a window of a heatmap: the spec's positions counted from its first cell
    if shift:
        spec = {a: v - shift[a] if isinstance(v, numbers.Number) and a in shift else v for a, v in spec.items()}
        for a, vals, n in (("x", xs, nx), ("y", ys, ny)):
            v = spec.get(a)
            drawn = [float(u) for u in vals if isinstance(u, numbers.Number)] if vals is not None else [0, n - 1]
            if isinstance(v, numbers.Number) and drawn and not min(drawn) - 0.5 <= v <= max(drawn) + 0.5:
                return fig  # the cell is outside the window drawn: no outline stretched off the map
    x = _coord(xs, spec["x"], data, nx) if "x" in spec else None
    y = _coord(ys, spec["y"], data, ny) if "y" in spec else None
    xref, yref = (getattr(tr, "xaxis", None) or "x"), (getattr(tr, "yaxis", None) or "y")
    if x and y:
        fig.add_shape(type="rect", xref=xref, yref=yref, x0=x[0] - x[1], x1=x[0] + x[1], y0=y[0] - y[1],
                      y1=y[0] + y[1], **style)
    elif x:
        fig.add_shape(type="rect", xref=xref, yref="paper", x0=x[0] - x[1], x1=x[0] + x[1], y0=0, y1=1, **style)
    elif y:
        fig.add_shape(type="rect", xref="paper", yref=yref, x0=0, x1=1, y0=y[0] - y[1], y1=y[0] + y[1], **style)
    return fig
