"""Every lesson step on a 1280 × 720 projector in presenter mode (issue 35), walked as a lecturer with a clicker
walks it: the step's link opens step 1, Next (the clicker's PageDown) moves on, Skip reveals each question.

At every step, before the reveal: the step's question (its options or its estimate box) is whole on the first
screen. After it (a step without a question: at once), the step's chart (the page scrolls it into view): at least
``MIN_VISIBLE`` of its box on screen, no heatmap row or column with numbers in its cells thinner than
``READABLE_CELL_PX`` and no colour-only one thinner than ``COLOUR_CELL_PX`` (measured against the axis's drawn
range, so an outline stretched off the map counts), no label under ``MIN_FONT_PX``, no title, axis title or
legend over another, no tick label over another, and Plotly's toolbar over no title.
Each lesson is walked in one language, English and Chinese in turn (SmolLM2's lesson in Chinese; the English
SmolLM2 pages are measured in test_browser_heatmap_rows.py and test_browser_layout.py). The measured table lands
in ``screenshots/lesson-screens.json`` (one file per lesson, merged by the reader), a screenshot per step in
``screenshots/``.

The Training lab's and the Interventions' charts are drawn once a run or a sweep is started (minutes on SmolLM2):
their lessons are walked for their questions, and their charts are measured where they are drawn.
"""

from __future__ import annotations

import json

import pytest

from teaching import lessons
from tests.browser_support import CELL_PX_JS, SHOTS, assert_clean, key_css, settle
from ui.window import COLOUR_CELL_PX, READABLE_CELL_PX

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
MIN_VISIBLE = 0.8  # share of the step's chart box on screen after the reveal
MIN_FONT_PX = 14  # every label of the step's chart (title, axes, ticks, colour bar; not cell text)
LESSONS = lessons.load_all()
LANGS = {lesson.id: ("en", "zh")[i % 2] for i, lesson in enumerate(LESSONS)}
URL_LANG = {"en": "English", "zh": "%E4%B8%AD%E6%96%87"}
NOT_PLOTLY = ("shapes", "keep")  # a step's "chart" that is a table or a diagram, not a Plotly figure
RUN_CHARTS = ("train.", "interv.")  # drawn once a Training-lab run or an intervention sweep is started

# The step's chart (by its key) and the screen around it: its box and visible share, the thinnest drawn heatmap
# cell against the axis's range, the smallest label, and the toolbar's overlap with any title.
MEASURE = """(sel) => {
  """ + CELL_PX_JS + """
  const host = sel ? document.querySelector(sel) : null;
  const c = host && (host.matches('[data-testid="stPlotlyChart"]') ? host : host.querySelector('[data-testid="stPlotlyChart"]'));
  if (!c) return null;
  const vw = innerWidth, vh = innerHeight, r = c.getBoundingClientRect();
  const seenH = Math.max(0, Math.min(r.bottom, vh) - Math.max(r.top, 0));
  const seenW = Math.max(0, Math.min(r.right, vw) - Math.max(r.left, 0));
  const cell = cellPx(c.querySelector('.js-plotly-plot'));
  const {over: texts, crowded} = textOverlaps(c);
  const box = e => e.getBoundingClientRect(), tb = c.querySelector('.modebar-container');
  const titles = [...c.querySelectorAll('.gtitle, .g-gtitle text, .annotation')].map(box);
  const over = tb ? titles.reduce((s, t) => { const b = box(tb);
    return s + Math.max(0, Math.min(b.right, t.right) - Math.max(b.left, t.left)) * Math.max(0, Math.min(b.bottom, t.bottom) - Math.max(b.top, t.top)); }, 0) : 0;
  const fonts = [...c.querySelectorAll('.main-svg text')]
    .filter(e => e.textContent.trim() && !e.closest('.heatmap-label, .textpoint, .hovertext'))
    .map(e => parseFloat(getComputedStyle(e).fontSize));
  return {top: r.top, height: r.height, visible: r.width && r.height ? seenH * seenW / (r.width * r.height) : 0,
          cell, texts, crowded, toolbarOverTitle: over, minFont: fonts.length ? Math.min(...fonts) : null};
}"""


def _wait_step(page, n: int) -> None:
    page.wait_for_function("n => new URLSearchParams(location.search).get('step') === String(n)", arg=n,
                           timeout=180_000)
    page.wait_for_selector(key_css("lessons.banner"), timeout=180_000)
    settle(page, 1200)  # the step's scroll to the page's top has run


def _question_box(page) -> dict | None:
    q = page.locator(key_css("lessons.option.0") + ", " + key_css("lessons.estimate")).first
    q.wait_for(timeout=120_000)
    settle(page, 600)
    return q.bounding_box()


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.id for lesson in LESSONS])
def test_every_step_fits_a_projector(server, browser, lesson):
    lang = LANGS[lesson.id]
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.set_default_timeout(180_000)
    rows, problems = [], []
    try:
        first = lesson.steps[0]
        page.goto(f"{server}/{first.page}?lesson={lesson.id}&step=1&ui.lang={URL_LANG[lang]}&ui.presenter=true",
                  wait_until="domcontentloaded")
        for step in lesson.steps:
            n = step.number
            if n > 1:
                settle(page)
                page.locator(key_css("lessons.next") + " button").click()  # the clicker's PageDown is this button
            _wait_step(page, n)
            assert_clean(page)
            row = {"lesson": lesson.id, "lang": lang, "step": n, "page": step.page}
            if step.question is not None:
                q = _question_box(page)  # drawn once the step's answer key is computed (SmolLM2: seconds)
                row["question_bottom"] = q and round(q["y"] + q["height"])
                if q is None or q["y"] < 0 or q["y"] + q["height"] > HEIGHT:
                    problems.append(f"step {n}: the question is not on the first screen: {q}")
                page.locator(key_css("lessons.skip") + " button").click()  # Skip reveals
                settle(page, 1500)
            chart = step.chart[0] if step.chart else None
            if chart and not chart.endswith(NOT_PLOTLY):
                sel = key_css(f"{chart}.chart")
                if not chart.startswith(RUN_CHARTS):  # a run's chart waits for its run: measured where drawn
                    page.wait_for_selector(sel + " .main-svg", timeout=120_000)
                settle(page, 1800)  # scrolled into view (smoothly), responsive size taken
                m = page.evaluate(MEASURE, sel)
                row.update(chart=chart, **(m or {}))
                if m is not None:
                    if m["visible"] < MIN_VISIBLE:
                        problems.append(f"step {n} {chart}: {m['visible']:.2f} of the chart on screen")
                    if m["cell"]["text"] is not None and m["cell"]["text"] < READABLE_CELL_PX - 0.5:
                        problems.append(f"step {n} {chart}: heatmap cells with text {m['cell']['text']:.1f} px")
                    if m["cell"]["colour"] is not None and m["cell"]["colour"] < COLOUR_CELL_PX:
                        problems.append(f"step {n} {chart}: heatmap cells {m['cell']['colour']:.1f} px")
                    if m["crowded"]:
                        problems.append(f"step {n} {chart}: {m['crowded']} pairs of tick labels over one another")
                    if m["texts"]:
                        problems.append(f"step {n} {chart}: titles over one another: {m['texts']}")
                    if m["minFont"] is not None and m["minFont"] < MIN_FONT_PX:
                        problems.append(f"step {n} {chart}: a {m['minFont']} px label")
                    if m["toolbarOverTitle"]:
                        problems.append(f"step {n} {chart}: the toolbar covers a title")
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / f"lesson-screen-{lesson.id}-{n}-{lang}.png"))
            rows.append(row)
    finally:
        (SHOTS / f"lesson-screens-{lesson.id}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
        page.close()
    print("\n" + "\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    assert not problems, "\n".join(problems)
