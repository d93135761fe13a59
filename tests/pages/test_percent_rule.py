"""Numbers on one screen follow one rounding rule (issue 35: not "12%" beside "59.4%"): every percentage a page
writes in its text is ``ui.format.percent``'s (one decimal from 1 %, three below), checked on the pages that
write shares and probabilities, both languages."""

from __future__ import annotations

import re

import pytest

from tests.page_helpers import open_page

PERCENT = re.compile(r"(?<![\d.])(\d+(?:\.(\d+))?)%")


def shown_percentages(at) -> list[str]:
    words = [e.value for kind in ("markdown", "caption", "info", "warning", "success") for e in getattr(at, kind)]
    return [m.group(0) for w in words for m in PERCENT.finditer(str(w))]


def follows_the_rule(text: str) -> bool:
    """What percent() writes: ``12.3%`` from 1 %, ``0.123%`` below, ``0%`` for nothing (re-derived here, not
    imported)."""
    value, decimals = float(text[:-1]), len(text[:-1].partition(".")[2])
    if text == "0%":
        return True
    return decimals == (1 if value >= 1 else 3)


def test_the_rule_itself():
    assert [follows_the_rule(s) for s in ("12%", "59.4%", "0.123%", "0.1%", "100.0%", "0%", "0.0%")] == [
        False, True, True, False, True, True, False]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", ["generate", "next_token", "overview"])
def test_a_pages_percentages_share_one_rule(page, lang):
    if page == "overview":  # its shares: a mixture of experts' active parameters
        from settings.schema import preset_values
        at = open_page(page, lang=lang, **{**preset_values("minimind_moe"), "cfg.preset": "minimind_moe"})
    else:
        at = open_page(page, lang=lang)
    if page == "generate":
        for _ in range(2):
            at.button(key="gen.next").click().run()
    assert not at.exception
    shown = shown_percentages(at)
    assert shown and [s for s in shown if not follows_the_rule(s)] == [], shown
