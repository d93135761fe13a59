"""Projector layout in a real browser: 1280 × 720, presenter mode on, every page reached by clicking the
navigation (never ``page.goto`` per page), with the random model (English and Chinese) and with SmolLM2 (picked
in the sidebar; its parity panel and language notice sit above the charts).

On every page the first chart is on the first screen without scrolling: its top inside the viewport and at
least ``MIN_VISIBLE`` of its box inside it (the visible fraction, measured, not only its top edge; the fractions
land in ``screenshots/projector-<model>-<lang>-visible.json``); chart labels are enlarged (presenter mode scales
the charts, not only the headings), Plotly's toolbar covers no chart title, and slider values sit above their knob
in the app's sans font. Screenshots
land in ``screenshots/`` for a person to look at.
"""

from __future__ import annotations

import json

import pytest

from tests.browser_support import (
    CHART, NAV_LINKS, SHOTS, assert_clean, choose_smollm2, click_nav, open_app, settle,
)

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
PRESENTER_TICK_PX = 18  # chart fonts: 13 px normally, 20 px in presenter mode
MIN_VISIBLE = 0.8  # share of the first chart's box inside the 1280 x 720 viewport
CHARTLESS = ("lessons", "experts")  # no chart until a lesson is opened / on a dense model

# The first chart's box (the Streamlit element around the Plotly figure) and how much of it the viewport shows.
FIRST_CHART = """() => {
  const c = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"]');
  if (!c) return null;
  const r = c.getBoundingClientRect(), vw = window.innerWidth, vh = window.innerHeight;
  const seenH = Math.max(0, Math.min(r.bottom, vh) - Math.max(r.top, 0));
  const seenW = Math.max(0, Math.min(r.right, vw) - Math.max(r.left, 0));
  // tick labels and axis titles (an axis with one label per token fits them to its rows: smaller than the rest)
  const ticks = [...c.querySelectorAll('.xtick text, .ytick text, .xtitle, .ytitle')]
    .map(e => parseFloat(getComputedStyle(e).fontSize));
  // Plotly's toolbar against the chart's title: the boxes' overlap in px² (a hidden toolbar has no box)
  const box = e => e ? e.getBoundingClientRect() : null, tb = box(c.querySelector('.modebar-container')),
        tt = box(c.querySelector('.gtitle'));
  const overlap = tb && tt ? Math.max(0, Math.min(tb.right, tt.right) - Math.max(tb.left, tt.left))
                             * Math.max(0, Math.min(tb.bottom, tt.bottom) - Math.max(tb.top, tt.top)) : 0;
  return {top: r.top, bottom: r.bottom, height: r.height, scrollY: window.scrollY, toolbarOverTitle: overlap,
          visible: r.height > 0 && r.width > 0 ? (seenH * seenW) / (r.height * r.width) : 0,
          tickPx: ticks.length ? Math.max(...ticks) : null,
          title: (c.querySelector('.gtitle') || {}).textContent || ''};
}"""

SLIDER_VALUES = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stSliderThumbValue"]')]
  .map(v => { const knob = v.closest('[data-testid="stSlider"]').querySelector('[role="group"] input').closest('div[style]').parentElement;
              const k = knob.getBoundingClientRect(), b = v.getBoundingClientRect();
              return {valueBottom: b.bottom, knobTop: k.top, font: getComputedStyle(v.querySelector('p') || v).fontFamily}; })"""


def _first_chart(page, path: str) -> dict:
    if path == "train":  # the training lab draws its first chart once a run is going: start one, stop it after
        page.locator('[data-testid="stMain"] button[kind="primary"]').first.click()  # ▶ Start
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=420_000)
        page.wait_for_timeout(500)
        info = page.evaluate(FIRST_CHART)
        page.locator('[data-testid="stMain"] button:has-text("■")').first.click()  # ■ Stop
        settle(page)
        return info
    page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=420_000)
    settle(page, 1200)  # the chart has its final size (a responsive chart resizes once after it is drawn)
    return page.evaluate(FIRST_CHART)


def _walk(page, tag: str, chartless: tuple[str, ...] = ()) -> dict[str, dict]:
    """Every page in navigation order, reached by clicking; the first chart's box on each (screenshot saved).
    Pages in ``chartless`` (and ``CHARTLESS``) draw no chart (the Training lab with a checkpoint: it is not
    trained here)."""
    chartless = (*CHARTLESS, *chartless)
    n = page.locator(NAV_LINKS).count()
    assert n >= 8  # every page of app.py
    seen = {}
    for i in range(n):
        path = (click_nav(page, i, timeout=420_000) if i else "overview") or "overview"
        assert_clean(page)
        if path in chartless:
            page.screenshot(path=str(SHOTS / f"projector-{tag}-{path}.png"))
            assert page.locator(f'[data-testid="stMain"] {CHART}').count() == 0, path
            continue
        info = _first_chart(page, path)
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"projector-{tag}-{path}.png"))
        assert info is not None, f"{tag} {path}: no chart"
        seen[path] = info
        for s in page.evaluate(SLIDER_VALUES):
            assert s["valueBottom"] <= s["knobTop"] + 1, f"{tag} {path}: slider value sits on its knob: {s}"
            assert "Noto Sans" in s["font"], s["font"]  # the app's sans font, never a serif fallback
    (SHOTS / f"projector-{tag}-visible.json").write_text(json.dumps(
        {p: round(v["visible"], 3) for p, v in seen.items()}, indent=1))
    return seen


def _check(seen: dict[str, dict], tag: str) -> None:
    """Every page's first chart: top on screen, most of it visible, enlarged tick labels."""
    short = {p: f"top {v['top']:.0f}, height {v['height']:.0f}, visible {v['visible']:.2f}" for p, v in seen.items()}
    for path, info in seen.items():
        assert info["scrollY"] == 0, (tag, path)
        assert 0 <= info["top"] < HEIGHT - 120, f"{tag} {path}: first chart starts at y={info['top']:.0f}: {short}"
        assert info["visible"] >= MIN_VISIBLE, f"{tag} {path}: {info['visible']:.2f} of the first chart on screen: {short}"
        assert info["tickPx"] is not None and info["tickPx"] >= PRESENTER_TICK_PX, (tag, path, info)
        assert info["toolbarOverTitle"] == 0, f"{tag} {path}: Plotly's toolbar covers the chart's title: {info}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_projector_first_chart_in_view_on_every_page(server, browser, lang):
    page = open_app(browser, server, WIDTH, HEIGHT, lang=lang, presenter=True)
    try:
        seen = _walk(page, f"random-{lang}")
        _check(seen, lang)
        # the Overview's first chart is the parameter chart, also in presenter mode
        assert ("Parameters" if lang == "en" else "参数") in seen["overview"]["title"]
    finally:
        page.close()


def test_projector_first_chart_in_view_with_smollm2(server, browser):
    """The same with SmolLM2 chosen in the sidebar: its parity panel, longer tick labels, 30 layers."""
    page = open_app(browser, server, WIDTH, HEIGHT, lang="en", presenter=True, timeout=420_000)
    try:
        choose_smollm2(page, "en")
        seen = _walk(page, "smollm2-en", chartless=("train",))
        _check(seen, "smollm2")
        assert "Parameters" in seen["overview"]["title"]
    finally:
        page.close()
