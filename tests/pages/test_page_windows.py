"""Tall heatmaps draw a window of rows in presenter mode (ui/window.py): the caption names the rows the chart
draws, the default window is the last positions / the deepest depths, and moving it draws other rows of the
same (independently computed) matrix."""

from __future__ import annotations

import re

import numpy as np
import torch

from tests.page_helpers import open_page, reference, rerun, texts
from ui.figures.attention import attention_heatmap
from ui.figures.lens import lens_heatmap
from ui.window import PRESENTER_HEATMAP_W, rows_that_fit

LONG = {"input.text": "The cat sat on the mat and the dog sat on the log, then both of them went to sleep."}
PRESENTER = {"ui.presenter": True}


def _shown(at, what: str) -> tuple[int, int]:
    m = re.search(rf"{what} (\d+)–(\d+)", texts(at))
    assert m, f"no '{what} a–b' caption"
    return int(m.group(1)), int(m.group(2)) + 1


def test_attention_window_caption_matches_drawn_rows(charts):
    state = {**LONG, "attn.layer": 2, "attn.head": 1}
    at = open_page("attention", **state, **PRESENTER)
    assert not at.exception
    model, ids, _ = reference(**LONG)
    T = ids.shape[1]
    with torch.no_grad():
        full = model(ids, output_attentions=True).attentions[1][0, 0].double().numpy()
    for start in (None, 0, 3):
        if start is not None:
            rerun(at, **{"attn.start": start})
            assert not at.exception
        lo, hi = _shown(at, "queries")
        k0, k1 = _shown(at, "keys")  # every key the shown queries see, as many as fit across the presenter plot
        assert (k0, k1) == (max(0, hi - rows_that_fit(PRESENTER_HEATMAP_W)), hi)
        if start is None:
            assert hi == T and hi - lo < T  # the default: the last positions; not all fit
        else:
            assert lo == start
        z = charts(attention_heatmap).data.to_numpy(dtype=np.float64)
        assert z.shape == (hi - lo, k1 - k0)
        ref = full[lo:hi, k0:k1]
        seen = np.arange(k0, k1)[None, :] <= np.arange(lo, hi)[:, None]  # a key at or before its query
        np.testing.assert_allclose(z[seen], ref[seen], atol=1e-6, rtol=1e-5)


def test_lens_window_caption_matches_drawn_depths(charts):
    state = {**LONG, "cfg.num_hidden_layers": 24}
    at = open_page("lens", **state, **PRESENTER)
    assert not at.exception
    L = 24
    for start in (None, 0):
        if start is not None:
            rerun(at, **{"lens.depth_start": start})
            assert not at.exception
        d0, d1 = _shown(at, "depths")
        call = charts(lens_heatmap)
        if start is None:
            assert d1 == L + 1 and d1 - d0 < L + 1  # the default: the deepest depths; not all fit
        else:
            assert d0 == 0
        drawn = call.arguments["depth_labels"]
        want = ["embed" if d == 0 else f"block {d}" for d in range(d0, d1)]
        assert list(drawn) == want
        assert sorted(call.data["depth"].unique()) == list(range(d1 - d0))  # rows = the window's depths


def test_outside_presenter_everything_fits():
    at = open_page("attention", **LONG)
    assert not at.exception
    assert not re.search(r"queries \d+–", texts(at))  # 600 px at 16 px a row holds the whole short text
