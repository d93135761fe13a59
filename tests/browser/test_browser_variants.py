"""The 2024-2026 block variants in a real browser, as a lecturer shows them (issue 26): a fresh context, a variant
preset picked in the sidebar's preset box by clicking, then the navigation clicked to Attention, Norm placement and
Experts (MoE). Every page opens without an exception and draws what the variant changes: the sink as the attention
heatmap's last column (gpt-oss), one line per norm placement (four), the router map on a mixture of experts and a
sentence instead of a chart on a dense model. English for three presets, Chinese for the other two.
"""

from __future__ import annotations

import pytest

from tests.browser_support import NAV_INDEX, SHOTS, assert_clean, click_nav, open_app, settle
from ui.i18n import catalogs

pytestmark = [pytest.mark.browser]

MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebar"]'
RUNS = {"en": ["qwen3_like", "gemma3_like", "gpt_oss_like"], "zh": ["olmo2_like", "minimind_moe"]}
MOE = {"gpt_oss_like", "minimind_moe"}

# The drawn figure under a chart key: its traces' names and, for a heatmap, the x-axis tick text.
FIGURE = """(sel) => { const gd = document.querySelector(sel + ' .js-plotly-plot');
  return gd ? {names: gd._fullData.map(t => t.name || ''), types: gd._fullData.map(t => t.type),
               ticks: (gd._fullLayout.xaxis.ticktext || []).slice()} : null; }"""


def css(key: str) -> str:
    return ".st-key-" + key.replace(".", "-")


def pick_preset(page, lang: str, name: str) -> None:
    """Open the sidebar's model settings if folded, click the preset box and the preset's entry."""
    L = catalogs()[lang]
    box = page.locator(f'{SIDEBAR} [data-testid="stSelectbox"]').filter(has_text=L["cfg.preset.label"])
    # scrolled to the sidebar's middle first, as a person would: at the window's bottom edge (where the class-mode
    # section above pushes it at 1440 x 1000) its list opens with no room and shows no option
    box.evaluate("e => e.scrollIntoView({block: 'center'})")
    box.click()
    page.locator('[role="option"]').filter(has_text=L[f"preset.{name}"]).first.click()
    page.wait_for_function("t => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes(t)",
                           arg=L[f"preset_source.{name}"][:20], timeout=300_000)
    settle(page, timeout=300_000)
    assert_clean(page)


def figure(page, key: str) -> dict:
    page.wait_for_selector(f"{MAIN} {css(key + '.chart')} .main-svg", timeout=300_000)
    fig = page.evaluate(FIGURE, f"{MAIN} {css(key + '.chart')}")
    assert fig is not None, key
    return fig


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_variant_preset_on_attention_norm_placement_and_experts(server, browser, lang):
    L = catalogs()[lang]
    page = open_app(browser, server, 1440, 1000, lang=lang, timeout=300_000)
    page.set_default_timeout(300_000)
    try:
        SHOTS.mkdir(exist_ok=True)
        for name in RUNS[lang]:
            pick_preset(page, lang, name)

            assert click_nav(page, NAV_INDEX["attention"], timeout=300_000) == "attention"
            assert_clean(page)
            heat = figure(page, "attn.heatmap")
            assert (heat["ticks"][-1] == L["attn.sink_col"]) == (name == "gpt_oss_like"), heat["ticks"][-3:]
            page.screenshot(path=str(SHOTS / f"variants-{name}-attention-{lang}.png"))

            assert click_nav(page, NAV_INDEX["pre-vs-post"], timeout=300_000) == "pre-vs-post"
            assert_clean(page)
            norms = figure(page, "prepost.norms")
            lines = [n for n, kind in zip(norms["names"], norms["types"]) if kind == "scatter" and n]
            assert len(lines) >= 4, lines  # one line per placement, the model's own first
            page.screenshot(path=str(SHOTS / f"variants-{name}-placement-{lang}.png"))

            assert click_nav(page, NAV_INDEX["experts"], timeout=300_000) == "experts"
            assert_clean(page)
            if name in MOE:
                router = figure(page, "experts.router")
                assert "heatmap" in router["types"]
            else:
                settle(page, timeout=300_000)
                assert page.locator(f"{MAIN} [data-testid='stPlotlyChart']").count() == 0  # dense: said in words
            page.screenshot(path=str(SHOTS / f"variants-{name}-experts-{lang}.png"))
    finally:
        page.close()
