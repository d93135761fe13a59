"""The one place numbers become text for the pages and charts.

Rule: a value that is not a finite number (None, NaN, +inf, -inf) is never shown as a number; text gets
:data:`DASH` and a heatmap cell gets no label. Everything else is Python's ``format(float(v), spec)``, so
``spec`` is a format spec such as ``".3f"``, ``".3g"``, ``".1e"``, ``",.0f"`` or ``".1%"``.
"""

from __future__ import annotations

import math
from typing import Iterable

from ui.i18n import t

DASH = "—"


def finite(v) -> bool:
    """True for a number that is neither None, NaN nor infinite (numpy scalars included)."""
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def number(v, spec: str = ".3f") -> str:
    """``v`` formatted with ``spec``; :data:`DASH` when it is not a finite number."""
    return format(float(v), spec) if finite(v) else DASH


def scientific(v, spec: str = ".1e") -> str:
    """A small difference or error: ``"0"`` when exactly zero, else ``number(v, spec)`` (``3.2e-07``)."""
    return "0" if finite(v) and float(v) == 0 else number(v, spec)


def significant(v, digits: int = 3) -> str:
    """``v`` with ``digits`` significant digits and no exponent for ordinary sizes: ``0.25``, ``1.5``, ``12.3``,
    ``4,096`` (a whole number from ``10 ** (digits - 1)`` up); :data:`DASH` when it is not a finite number."""
    if not finite(v):
        return DASH
    return f"{float(v):,.0f}" if abs(float(v)) >= 10 ** (digits - 1) else f"{float(v):.{digits}g}"


def percent(p) -> str:
    """A probability as a percentage with enough digits for tiny values (``12.3%``, ``0.123%``, ``1.0e-06``);
    exactly zero is ``0%`` (a filter that removed nothing)."""
    if not finite(p):
        return DASH
    if float(p) == 0:
        return "0%"
    return f"{p:.1%}" if p >= 0.01 else f"{p:.3%}" if p >= 1e-5 else f"{p:.1e}"


def duration(seconds, lang: str | None = None) -> str:
    """A duration for the progress text: ``"4.2 s"`` under 10 s, ``"42 s"`` under a minute, then ``"m:ss"``."""
    if not finite(seconds):
        return DASH
    if seconds < 10:
        return t("train.seconds", lang=lang, s=f"{seconds:.1f}")
    s = int(round(seconds))
    return f"{s // 60}:{s % 60:02d}" if s >= 60 else t("train.seconds", lang=lang, s=s)


def cells(z: Iterable[Iterable], spec: str) -> list[list[str]]:
    """Per-cell labels of a heatmap: ``number(v, spec)``, and an empty label for a cell that is not finite."""
    return [[number(v, spec) if finite(v) else "" for v in row] for row in z]
