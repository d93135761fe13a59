"""The lesson banner's scroll (``ui.teaching.lesson_banner.scroll_script``) in a real browser, on a page built to
behave as a loaded server's does: the step's chart box is there first, its figure is drawn small, and only later takes
its full height. The scroll must leave the whole chart on screen, and must stop following the chart once the reader
scrolls. No app server: the script runs on a static page, so the timing is the test's own."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from ui.teaching.lesson_banner import scroll_script

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
ABOVE_PX = 450  # the banner and the page's head above the chart
SMALL_PX, FULL_PX = 200, 551  # the figure as first drawn (inside the screen) and once it has its responsive height

# A scrolling main block as Streamlit's: the chart's box, empty until the figure is drawn (t = 300 ms), drawn small,
# then grown (t = ``grow`` ms).
PAGE = f"""<html><body style="margin:0">
<div id="main" style="height:100vh; overflow:auto">
  <div id="head" style="height:{ABOVE_PX}px">banner</div>
  <div class="target"><div data-testid="stPlotlyChart"><div id="figure" style="height:{SMALL_PX}px"></div></div></div>
  <div style="height:2000px">below</div>
</div>
<script>
  setTimeout(() => document.getElementById('figure').innerHTML = '<svg class="main-svg"></svg>', 300);
  window.grow = (ms) => setTimeout(() => document.getElementById('figure').style.height = '{FULL_PX}px', ms);
</script>
</body></html>"""

SEEN = """() => { const r = document.querySelector('.target').getBoundingClientRect();
  return (Math.min(r.bottom, innerHeight) - Math.max(r.top, 0)) / r.height; }"""


@contextmanager
def _opened(browser):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page.set_content(PAGE)
        yield page
    finally:
        page.close()


def _scrolled(page) -> float:
    """How far the page's main block is scrolled, in px."""
    return page.evaluate("() => document.getElementById('main').scrollTop")


def _run_script(page, selector: str = ".target", block: str = "nearest") -> None:
    script = scroll_script(selector, block)
    page.evaluate("js => new Function(js)()", script.removeprefix("<script>").removesuffix("</script>"))


def test_a_chart_that_grows_after_it_is_drawn_ends_whole_on_screen(browser):
    with _opened(browser) as page:
        page.evaluate("() => grow(1500)")
        _run_script(page)
        page.wait_for_timeout(700)  # drawn small, inside the screen: nothing to scroll yet
        assert _scrolled(page) == 0
        page.wait_for_timeout(2300)  # grown past the screen's foot at 1.5 s, then scrolled again
        assert page.evaluate(SEEN) > 0.99, "the grown chart was left partly below the screen"
        assert _scrolled(page) == pytest.approx(ABOVE_PX + FULL_PX - HEIGHT, abs=2)  # "nearest": as little as shows it


def test_the_readers_own_scroll_stops_it(browser):
    with _opened(browser) as page:
        _run_script(page)
        page.wait_for_timeout(800)  # drawn: the script follows the chart from now on
        page.mouse.move(WIDTH / 2, HEIGHT / 2)
        page.mouse.wheel(0, 100)  # the reader scrolls down a little, to read on
        page.wait_for_timeout(500)
        read_at = _scrolled(page)
        assert read_at > 0
        page.evaluate("() => grow(0)")  # the chart moves on screen afterwards
        page.wait_for_timeout(1500)
        assert _scrolled(page) == read_at


def test_a_newer_scroll_stops_an_older_one(browser):
    with _opened(browser) as page:
        _run_script(page)
        page.evaluate("() => document.getElementById('main').scrollTop = 100")  # as if the script had scrolled
        page.wait_for_timeout(800)  # drawn: the chart's script follows it from now on
        _run_script(page, "#head", "start")  # the next scroll: the page's top
        page.wait_for_timeout(800)
        assert _scrolled(page) == 0
        page.evaluate("() => grow(0)")  # the chart grows past the screen's foot: the older script would follow it
        page.wait_for_timeout(1500)
        assert _scrolled(page) == 0
