"""The chart recorder the page tests read DataFrames through (tests/page_helpers.recording_charts): it sees a
builder call made through the module attribute (as a page script makes it), names the call by builder, and puts
every builder back afterwards, also in a module that picked the wrapper up while it ran."""

from __future__ import annotations

import sys
import types

import numpy as np
import pandas as pd
import pytest

import ui.figures.loss as loss_figures
from tests.page_helpers import recording_charts
from ui.figures.next_token import topk_bar

TABLE = pd.DataFrame({"position": [0, 1], "input_token": ["a", "b"], "target_token": ["b", "c"],
                      "masked": [False, True], "loss": [2.0, np.nan], "contribution": [2.0, np.nan],
                      "share": [1.0, np.nan]})


def test_records_calls_by_builder_and_puts_every_builder_back():
    original = loss_figures.contribution_bar
    probe = types.ModuleType("ui._recorder_probe")
    with recording_charts() as charts:
        assert loss_figures.contribution_bar is not original  # wrapped while recording
        fig = loss_figures.contribution_bar(TABLE, "title", "x", "y", masked_label="masked")
        call = charts(original)  # asked for by the builder itself ...
        assert charts("ui.figures.loss.contribution_bar") is call  # ... or by its dotted name
        assert call.data is TABLE and call.figure is fig
        assert call.arguments["title"] == "title" and call.arguments["masked_label"] == "masked"
        assert call.layout["title"]["text"] == "title"
        assert charts(original, title="title") is call
        with pytest.raises(AssertionError, match="0 calls"):
            charts(original, title="another")
        with pytest.raises(AssertionError, match="0 calls"):
            charts(topk_bar)  # not drawn: an error, never an empty answer
        probe.contribution_bar = loss_figures.contribution_bar  # a module imported while recording
        sys.modules[probe.__name__] = probe
    try:
        assert loss_figures.contribution_bar is original
        assert probe.contribution_bar is original
    finally:
        del sys.modules[probe.__name__]
