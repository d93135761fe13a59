"""Compare side by side on Loss, Next token, Overview and Logit lens (ui/compare.py) under AppTest: each side's
chart is the single view of the same settings, the difference panel is the difference (or ratio) of the two single
views, and mismatched shapes (another depth, text or vocabulary) get a sentence, never an exception."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.page_helpers import open_compared, open_page, recording_charts, texts
from ui.figures.compare import ratio_by_position
from ui.figures.loss import contribution_bar

HEADS_8 = {"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 8}
DEEPER_SHORTER = {"cfg.num_hidden_layers": 3, "input.text": "白日依山尽，黄河入海流。"}


def single(page: str, builder, **state) -> pd.DataFrame:
    """The data ``builder`` draws on ``page``'s single view of ``state``."""
    with recording_charts() as calls:
        open_page(page, **state)
    return calls.data(builder)


def sides(calls, builder) -> dict[str, pd.DataFrame]:
    """The data of ``builder``'s compared charts by side ("A", "B"): their titles start "A ·" and "B ·"."""
    return {c.arguments["title"][0]: c.data for c in calls.all(builder) if c.arguments["title"][1:3] == " ·"}


# ---- Loss ----------------------------------------------------------------------------------------------------
LOSS_MASK = {"loss.prompt_len": 3}


@pytest.fixture(scope="module")
def loss():
    """B's heads 8 (the same tokens), the first 3 tokens masked as a prompt on both sides."""
    return open_compared("loss", HEADS_8, **LOSS_MASK)


def test_loss_sides_are_their_single_views_and_the_panel_their_ratio(loss):
    at, calls = loss
    assert not at.exception
    shown = sides(calls, contribution_bar)
    single_a = single("loss", contribution_bar, **LOSS_MASK)
    single_b = single("loss", contribution_bar, **LOSS_MASK, **HEADS_8)
    pd.testing.assert_frame_equal(shown["A"], single_a, check_exact=True)
    pd.testing.assert_frame_equal(shown["B"], single_b, check_exact=True)
    assert single_a["masked"].tolist()[:2] == [True, True]  # the page's mask reaches both sides
    panel = calls.data(ratio_by_position)
    ratio = single_b["loss"].to_numpy() / single_a["loss"].to_numpy()
    assert np.array_equal(panel["ratio"].to_numpy(), ratio, equal_nan=True)
    bars = [c.figure for c in calls.all(contribution_bar) if c.arguments["title"][1:3] == " ·"]
    assert bars[0].layout.yaxis.range == bars[1].layout.yaxis.range  # one y range
    mean = [df["loss"][~df["masked"]].mean() for df in (single_a, single_b)]
    delta = np.abs(single_b["loss"] - single_a["loss"]).to_numpy()
    p = int(np.nanargmax(delta))
    said = texts(at)
    assert f"B's mean loss is {mean[1] / mean[0]:.3g}× A's ({mean[1]:.4g} vs {mean[0]:.4g} nats)." in said
    assert f"The largest change is at position {p} (" in said
    assert f"{single_a['loss'][p]:.4g} nats in A → {single_b['loss'][p]:.4g} in B" in said


def test_loss_of_a_deeper_side_on_a_shorter_text_is_aligned_and_said():
    at, calls = open_compared("loss", DEEPER_SHORTER)
    assert not at.exception
    shown = sides(calls, contribution_bar)
    pd.testing.assert_frame_equal(shown["B"], single("loss", contribution_bar, **DEEPER_SHORTER), check_exact=True)
    n = len(shown["B"])
    assert len(calls.data(ratio_by_position)) == n < len(shown["A"])
    said = texts(at)
    assert "A has 2 layers, B 3: the layers past 2 have no counterpart." in said
    assert f"The ratio covers positions 0–{n - 1}, the ones both sides predict" in said
    assert "read different tokens" in said and "B's mean loss is" in said

