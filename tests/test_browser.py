"""Real-browser tests: Debian chromium driven by Playwright against `streamlit run app.py`.

Every page is visited in English and Chinese; no page may show an exception and every chart must render.
Screenshots go to ``screenshots/`` (git-ignored) for a person to look at. A missing chromium is a failure,
not a skip: these tests are the only check that the app works in a browser.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
PAGES = ["overview", "norms", "pre-vs-post", "attention", "loss", "next-token", "train"]
CHART = '[data-testid="stPlotlyChart"] .main-svg'
URL_LANG = {"en": "English", "zh": "中文"}  # the language switch writes its label into the URL
START = {"English": "▶ Start", "中文": "▶ 开始"}
STOP = {"English": "■ Stop", "中文": "■ 停止"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    assert Path(CHROMIUM).exists(), f"chromium not found at {CHROMIUM}: install Debian's chromium (see README)"
    port = _free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("streamlit did not become healthy within 60 s")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 2600})
    page.goto(url, wait_until="domcontentloaded")
    if "/train" in url:  # the training lab draws its charts once a run starts: start one, then stop it
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=90_000)
        page.get_by_role("button", name=START[url.split("ui.lang=")[-1]]).click()
        page.wait_for_selector(CHART, timeout=120_000)
        page.get_by_role("button", name=STOP[url.split("ui.lang=")[-1]]).click()
    page.wait_for_selector(CHART, timeout=90_000)
    page.wait_for_timeout(800)  # let the last reruns settle
    return page


def _assert_clean(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders(server, browser, path, lang):
    page = _open(browser, f"{server}/{path}?ui.lang={URL_LANG[lang]}")
    try:
        _assert_clean(page)
        n = page.locator(CHART).count()
        assert n >= 1, f"{path}: no chart rendered"
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{path}-{lang}.png"), full_page=True)
    finally:
        page.close()


def test_moving_a_slider_updates_a_chart(server, browser):
    page = _open(browser, f"{server}/norms?ui.lang=English")
    try:
        chart = '[data-testid="stPlotlyChart"]'
        before = page.locator(chart).first.inner_html()
        layers = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text="Layers L")
        handle = layers.locator('input[type="range"]').first
        handle.focus()
        handle.press("ArrowRight")  # layers 2 -> 3
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); return e && e.innerHTML !== old; }",
            arg=[chart, before], timeout=60_000,
        )
        page.wait_for_timeout(500)
        _assert_clean(page)
        assert "cfg.num_hidden_layers=3" in page.url  # the view is in the URL
        # the residual-norm chart now has L + 2 = 5 depths on its x axis
        assert page.locator(chart).first.locator(".xtick").count() == 5
    finally:
        page.close()
