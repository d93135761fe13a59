"""Every page opens for every variant preset (QK-norm, sandwich and OLMo-2 norms, sliding windows, sinks, experts):
no exception, and each page's first chart is drawn from a DataFrame (the norm placements compared on every
placement, sandwich and OLMo-2's included); Experts draws its router map on a mixture-of-experts preset and says in
words that a dense model has none."""

from __future__ import annotations

import pandas as pd
import pytest

from engine import VARIANT_PRESETS
from tests.page_helpers import open_page, recording_charts, texts
from settings.schema import preset_values

# pages whose first screen draws a chart at the sidebar's defaults (the lessons list and the training lab wait
# for a click; they are opened for the exception check only)
CHART_PAGES = ("overview", "norms", "prepost", "attention", "rope", "loss", "next_token", "generate", "heads", "lens",
               "interventions")
PAGES = CHART_PAGES + ("experts", "lesson_list", "train")


@pytest.fixture(scope="module")
def runs():
    """(preset, page) -> (no exception, the chart builders' DataFrames, the page's text), one run each."""
    out = {}
    with recording_charts() as charts:
        for name in VARIANT_PRESETS:
            for page in PAGES:
                at = open_page(page, via="script", **{**preset_values(name), "cfg.preset": name})
                out[name, page] = ([e.value for e in at.exception], [d for c in charts.calls for d in c.arguments.values() if isinstance(d, pd.DataFrame)], texts(at))
    return out


@pytest.mark.parametrize("name", sorted(VARIANT_PRESETS))
def test_every_page_opens_for_the_variant_preset(runs, name):
    for page in PAGES:
        exceptions, frames, shown = runs[name, page]
        assert not exceptions, (name, page, exceptions)
        if page == "experts":
            moe = VARIANT_PRESETS[name].num_local_experts > 0
            assert bool(frames) == moe, (name, frames)  # a dense model: said in words, no chart
        elif page in CHART_PAGES:
            assert frames and not frames[0].empty, (name, page)
