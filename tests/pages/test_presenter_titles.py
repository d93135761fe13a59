"""Presenter mode on a 1280 × 720 projector: a long chart title is broken into lines that fit the chart's width
(Plotly never wraps a title; it ran off the screen, "…(colour: probability of the final pr"), losing no word."""

import pytest

from page_helpers import figures, open_page
from ui.figures.common import PRESENTER_CHART_PX, text_width
from ui.i18n import t


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_logit_lens_title_fits_a_projector_screen_in_full(lang):
    at = open_page("lens", **{"ui.lang": lang, "ui.presenter": True})
    title = t("lens.chart_title", lang=lang)
    (fig,) = [f for f in figures(at) if f["layout"].get("title", {}).get("text", "").replace("<br>", "")
              .replace(" ", "") == title.replace(" ", "")]
    px = fig["layout"]["title"]["font"]["size"]
    lines = fig["layout"]["title"]["text"].split("<br>")
    assert text_width(title, px) > PRESENTER_CHART_PX  # one line would not fit
    assert len(lines) > 1 and all(text_width(line, px) <= PRESENTER_CHART_PX for line in lines), lines
    title_layout = fig["layout"]["title"]  # above the plot area, which moves down as far as the lines need
    assert (title_layout["yref"], title_layout["yanchor"], title_layout["automargin"]) == ("paper", "bottom", True)
