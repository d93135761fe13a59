"""What the compared pages (Head roles, RoPE, Interventions, Experts) share: the two sides' charts in two columns
(or a side's sentence where it has nothing to draw); for layers x heads grids the sentences of the largest change
between A's and B's grid and of how their shapes are paired, and the A − B map (``analysis.compare``: layers paired
by relative depth where the depths differ; no map where the head counts differ)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analysis import compare
from ui.figures.compare import PRESENTER_COMPARE_PX, difference_grid, same_height
from ui.format import number, scientific
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.compare import unaligned_notes
from ui.widgets import chart, revealed


def say(pair, said: list[str], key: str, skip: tuple[str, ...] = ()) -> None:
    """A compared chart's sentence (``said``, then what of the two sides has no counterpart, less ``skip``): it
    reads the chart ``key`` out, so it waits with it while a lesson's question is open (``ui.widgets.revealed``)."""
    if revealed(key):
        st.info(" ".join(said + unaligned_notes(pair, skip)))


def side_by_side(pair, drawn: dict, key: str, view: dict) -> None:
    """Each side's chart in its column: ``drawn[letter]`` is ``(table, figure, ...)``, or a sentence (a side with
    nothing to draw) said there instead; chart keys ``<key>.a`` and ``<key>.b``."""
    for column, (letter, _) in zip(st.columns(2), pair.sides()):
        with column:
            got = drawn[letter]
            if isinstance(got, str):
                st.info(got)
            else:
                chart(got[1], got[0], f"{key}.{letter}", columns=2, view={"side": letter.upper(), **view})


def grid_sentences(a: np.ndarray, b: np.ndarray, what: str, spec: str = ".3f", across: str = "head") -> list[str]:
    """Where ``what`` (a sentence's subject: "The induction score") changes most from grid ``a`` to ``b`` (values
    written with ``spec``), and how the layers and the columns (``across``: heads, or positions) are paired."""
    (La, na), (Lb, nb) = a.shape, b.shape
    said = []
    change = compare.largest_cell_change(a, b)
    pos = "_pos" if across == "position" else ""  # positions from 0, heads from 1
    if change is not None and change.a != change.b:
        col = change.head + (0 if pos else 1)
        where = t("compare.grid_at" + pos, layer=change.layer_a + 1, head=col) if La == Lb else \
            t("compare.grid_at_depth" + pos, la=change.layer_a + 1, lb=change.layer_b + 1, head=col)
        va, vb = number(change.a, spec), number(change.b, spec)
        shown = number(abs(change.a - change.b), spec) != number(0.0, spec)  # a change the digits shown can tell
        said.append(t("compare.grid_change", what=what, where=where, a=va, b=vb) if shown else
                    t("compare.grid_close", what=what, where=where, delta=scientific(abs(change.a - change.b))))
    elif change is not None:
        said.append(t("compare.grid_same", what=what))
    if na != nb:
        said.append(t("compare.grid_positions" if pos else "compare.grid_heads", a=na, b=nb))
    elif La != Lb:
        said.append(t("compare.grid_depth", a=La, b=Lb))
    return said


def difference_panel(a: np.ndarray, b: np.ndarray, title: str, key: str, view: dict, x_title: str,
                     y_title: str, col_labels: list[str] | None = None) -> None:
    """The A − B map of two grids (nothing where the column counts differ or no difference is finite: a side without
    the score), its rows "A's layer / B's" where the depths differ, its columns heads 1..n or ``col_labels``
    (positions); its download names both layers of each row."""
    got = compare.grid_difference(a, b)
    if got is None or not np.isfinite(got[0]).any():
        return
    diff, rows = got
    nh = diff.shape[1]
    labels = [str(i + 1) if i == j else f"{i + 1} / {j + 1}" for i, j in rows]
    fig = difference_grid(diff, labels, title, x_title, y_title if a.shape[0] == b.shape[0] else t("compare.layer_pair"),
                          t("compare.diff_unit"), col_labels)
    if presenter_mode():
        same_height([fig], PRESENTER_COMPARE_PX)
    table = pd.DataFrame({t("compare.col.layer_a"): [i + 1 for i, _ in rows for _ in range(nh)],
                          t("compare.col.layer_b"): [j + 1 for _, j in rows for _ in range(nh)],
                          t("compare.col.head") if col_labels is None else x_title:
                              list(range(1, nh + 1)) * len(rows) if col_labels is None else list(col_labels) * len(rows),
                          t("compare.diff_unit"): diff.reshape(-1)})
    chart(fig, table, key, view=view)
