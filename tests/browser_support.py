"""Shared real-browser support: a `streamlit run app.py` server and Debian chromium driven by Playwright.

The fixtures (``server``, ``browser``) are registered in ``tests/conftest.py`` so every browser test uses them.
``browser`` is a :class:`GuardedBrowser`: every context and page it opens records each request, and the
``offline_guard`` fixture (autouse, see conftest) fails a test whose pages asked any host other than the app
server. Chromium is also started with every other host unresolvable, as in a lecture room without internet.
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
APP_HOSTS = ("127.0.0.1", "localhost")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"]
CHART = '[data-testid="stPlotlyChart"] .main-svg'
# JavaScript for a drawn Plotly figure. ``cellPx(gd)``: the thinnest heatmap cell (px) it shows, measured against
# each axis's drawn range (an outline stretched off the map widens the range and counts): ``text`` for heatmaps with
# text in their cells, ``colour`` for colour-only ones (null without). ``textOverlaps(el)``: the pairs of its
# title, subplot titles, axis titles and legend whose boxes overlap, those running past the screen's edges, and
# how many pairs of its tick labels overlap.
CELL_PX_JS = """const cellPx = (gd) => {
  const out = {text: null, colour: null};
  for (const tr of (gd && gd._fullData) || []) {
    if (tr.type !== 'heatmap' || !tr.z || tr.visible !== true) continue;
    const xa = gd._fullLayout[(tr.xaxis || 'x').replace('x', 'xaxis')], ya = gd._fullLayout[(tr.yaxis || 'y').replace('y', 'yaxis')];
    const px = Math.min(ya._length / Math.abs(ya.range[1] - ya.range[0]), xa._length / Math.abs(xa.range[1] - xa.range[0]));
    const kind = tr.texttemplate && tr.text ? 'text' : 'colour';
    out[kind] = out[kind] === null ? px : Math.min(out[kind], px);
  }
  return out;
};
const textOverlaps = (el) => {
  const boxes = [...el.querySelectorAll('.gtitle, .annotation, .g-xtitle, .g-ytitle, .g-y2title, .legend')]
    .map(e => ({t: e.textContent.slice(0, 40), r: e.getBoundingClientRect()})).filter(b => b.r.width && b.r.height);
  const over = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1)
      over.push([boxes[i].t, boxes[j].t]);
  }
  // tick labels over one another (an axis labelling more rows than its height holds)
  const ticks = [...el.querySelectorAll('.xtick text, .ytick text')]  // level ones (a slanted label's box is no outline)
    .filter(e => !(e.getAttribute('transform') || '').includes('rotate')).map(e => e.getBoundingClientRect())
    .filter(r => r.width && r.height);
  let crowded = 0;
  for (let i = 0; i < ticks.length; i++) for (let j = i + 1; j < ticks.length; j++) {
    const a = ticks[i], b = ticks[j];
    // the glyphs, not the line boxes: more than a quarter of the smaller label covered (rows 20 px apart at a
    // 20 px font touch by their boxes' line spacing and read well)
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 0 && h > 0 && w * h > 0.25 * Math.min(a.width * a.height, b.width * b.height)) crowded++;
  }
  return {over, crowded, cut: boxes.filter(b => b.r.left < -1 || b.r.right > innerWidth + 1).map(b => b.t)};
};"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int | None = None, env: dict | None = None):
    """Start ``streamlit run app.py`` on a free port (``env``: more environment variables); returns
    ``(process, url)`` once healthy. The server's output goes to a file, ``server_log(proc)`` reads its end."""
    port = port or free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1", **(env or {}))
    log = tempfile.NamedTemporaryFile(prefix=f"streamlit-{port}-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    log.close()
    proc.log_path = log.name
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("streamlit did not become healthy within 90 s")


def server_log(proc, chars: int = 6000) -> str:
    """The end of a :func:`start_server` server's output (its stack dump, when a stop hung)."""
    try:
        return Path(proc.log_path).read_text(errors="replace")[-chars:]
    except (AttributeError, OSError):
        return ""


def is_foreign(url: str) -> bool:
    """A request to a host other than the app server (data:, blob: and about: URLs are local)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        return False
    return parts.hostname not in APP_HOSTS


class GuardedBrowser:
    """A Playwright browser whose contexts record every request to a host other than the app server."""

    def __init__(self, browser):
        self._browser = browser
        self.foreign: list[str] = []

    def _watch(self, context):
        context.on("request", lambda req: self.foreign.append(req.url) if is_foreign(req.url) else None)
        return context

    def new_context(self, **kwargs):
        return self._watch(self._browser.new_context(**kwargs))

    def new_page(self, **kwargs):
        """A page in its own fresh context (closing the page closes the context)."""
        context = self.new_context(**kwargs)
        page = context.new_page()
        page.on("close", lambda _: context.close())
        return page

    def __getattr__(self, name):
        return getattr(self._browser, name)


NAV_LINKS = '[data-testid="stSidebarNav"] a'
# Pages that draw no chart at first: the Training lab until a run starts, the lesson list until a lesson is opened,
# Experts on a dense model (every bundled model is dense: it offers the MoE preset instead)
CHARTLESS = ("train", "lessons", "experts")


def _nav_index() -> dict[str, int]:
    """URL path -> its link's index in the navigation (explorer.py's PAGES order), read from explorer.py's source."""
    tree = ast.parse((ROOT / "explorer.py").read_text(encoding="utf-8"))
    pages = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES")
    return {url: i for i, (_path, _key, url, _icon) in enumerate(pages)}


NAV_INDEX = _nav_index()  # a page added to the navigation moves the links after it: tests click by path
LANG_LABEL = {"en": "English", "zh": "中文"}
PRESENTER_LABEL = {"en": "Presenter mode", "zh": "演示模式"}


def settle(page, ms: int = 800, timeout: int = 120_000) -> None:
    """Wait until Streamlit has finished its rerun (no "running" indicator), then a little more."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)
    page.wait_for_timeout(ms)


def wait_text(page, selector: str, text: str, timeout: float = 180_000) -> None:
    """Wait until the element's text contains ``text`` (a page shows a change once its own rerun has finished; an
    element a rerun is redrawing reads as empty meanwhile); the failure says what it showed."""
    try:
        page.wait_for_function("([sel, t]) => (document.querySelector(sel)?.innerText || '').replace(/\\n/g, ' ')"
                               ".includes(t)", arg=[selector, text], timeout=timeout)
    except Exception as err:  # noqa: BLE001 -- say what the element showed
        shown = page.locator(selector).inner_text().replace("\n", " ") if page.locator(selector).count() else None
        raise AssertionError(f"waited for {text!r} in {selector}; it shows {shown!r}") from err


def open_app(browser, url: str, width: int = 1440, height: int = 1000, lang: str = "en", presenter: bool = False,
             timeout: int = 120_000):
    """Open the app's first page in a fresh context, then set the language and presenter mode by clicking
    the sidebar like a person. Returns the Playwright page. ``timeout`` (ms) bounds each wait for a rerun."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(90_000)  # a shared 2-core machine under load
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(CHART, timeout=timeout)
    settle(page, timeout=timeout)
    sidebar = page.locator('[data-testid="stSidebar"]')
    if lang == "zh":
        sidebar.locator('[data-testid="stButtonGroup"] button', has_text=LANG_LABEL["zh"]).click()
        page.wait_for_selector(f'{NAV_LINKS}:has-text("注意力")', timeout=timeout)
        settle(page, timeout=timeout)
    if presenter:
        sidebar.get_by_text(PRESENTER_LABEL[lang], exact=True).click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('style')].some(s => s.textContent.includes('/* presenter mode */'))",
            timeout=timeout)
        settle(page, timeout=timeout)
    return page


def click_nav(page, index: int, timeout: int = 120_000) -> str:
    """Click the index-th link of the sidebar navigation; returns the page's URL path after the click.
    ``timeout`` (ms) bounds the wait for the page's title and for its rerun to finish."""
    link = page.locator(NAV_LINKS).nth(index)
    href = link.get_attribute("href") or ""
    link.click()
    path = href.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
    page.wait_for_function("p => location.pathname.endsWith('/' + p)", arg=path, timeout=60_000)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout)
    settle(page, timeout=timeout)
    return path


def assert_clean(page) -> None:
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, exc.first.inner_text()


def checkpoint_shown(page, lang: str) -> str:
    """The text of the sidebar's checkpoint picker (its selected entry)."""
    from ui.strings.common import EN, ZH

    label = {"en": EN, "zh": ZH}[lang]["model.checkpoint.label"]
    select = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text=label)
    return select.locator('input[role="combobox"]').input_value()


def choose_smollm2(page, lang: str, timeout: int = 420_000) -> None:
    """Pick "pretrained checkpoint" in the sidebar's Model radio, as a user would; SmolLM2 is the checkpoint
    picker's first entry. Waits until it is loaded (the first use converts the GGUF file with a progress bar)
    and a chart is drawn again."""
    from ui.strings.common import EN, ZH

    s = {"en": EN, "zh": ZH}[lang]
    page.locator('[data-testid="stSidebar"]').get_by_text(s["model.source.checkpoint"], exact=True).click()
    # the checkpoint picker shows SmolLM2 (the read-only configuration below it is folded in presenter mode)
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stSidebar"] input[role="combobox"]')]
                                     .some(i => i.value.includes('SmolLM2'))""", timeout=timeout)
    settle(page, timeout=timeout)
    assert "SmolLM2" in checkpoint_shown(page, lang)
    page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=timeout)
    settle(page, timeout=timeout)


# ---- class mode: a room of people on one restartable server ---------------------------------------------------
PHONE = dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2)
LAPTOP = dict(viewport={"width": 1280, "height": 720})


def key_css(key: str) -> str:
    """The CSS class Streamlit gives an element drawn with ``key=``."""
    import re
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


class Room(dict):
    """A class's server (restartable on its port: ``restart()``) and the browser contexts of its people; a dict so
    that a module's tests can keep who is who in it (``room["lecturer"]``)."""

    def __init__(self, browser, env: dict | None = None):
        port = free_port()
        proc, url = start_server(port, env=env)
        super().__init__(url=url, port=port, proc=proc, students=[], contexts=[])
        self.browser, self.env = browser, env

    def page(self, **kwargs):
        """A new person: a fresh browser context (``PHONE``, ``LAPTOP`` or others), one page in it."""
        ctx = self.browser.new_context(**kwargs)
        self["contexts"].append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(90_000)
        return page

    def kill(self) -> None:
        self["proc"].kill()
        self["proc"].wait(timeout=20)

    def restart(self) -> None:
        self["proc"], _ = start_server(self["port"], env=self.env)

    def close(self) -> None:
        for ctx in self["contexts"]:
            ctx.close()
        self.kill()
