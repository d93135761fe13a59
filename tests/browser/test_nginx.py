"""deploy/nginx.conf in front of two `streamlit run` replicas on localhost: sticky, websocket-aware sessions.

nginx (Debian package) runs in the foreground with a temporary prefix; the repository's config is used as is,
except for its ports (free ones are picked) and the two upstream addresses. Checks:

* plain HTTP: a browser without the cookie gets an ``explorer_id`` cookie; the same cookie always reaches the
  same replica; forty different cookies reach both replicas (so the class is spread);
* a real browser through the proxy: the page loads, a slider rerun redraws the chart, clicking another page in
  the navigation works, no exception; nginx's access log shows every request of that browser, including the
  ``/_stcore/stream`` websocket (status 101), went to one replica.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser_support import ARGS, CHART, CHROMIUM, free_port as _free_port
from tests.browser_support import assert_clean as _assert_clean

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def _wait_healthy(url: str, proc: subprocess.Popen, what: str, seconds: float = 90) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {proc.stdout.read().decode()[-2000:]}")
        try:
            if urllib.request.urlopen(url, timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{what} did not answer {url} within {seconds} s")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    assert Path(NGINX).exists(), "nginx not found: install Debian's nginx (see .ci/run)"
    ports = [_free_port(), _free_port()]
    replicas = [subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                  "--server.port", str(p), "--browser.gatherUsageStats", "false"],
                                 cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for p in ports]
    prefix = tmp_path_factory.mktemp("nginx")
    (prefix / "logs").mkdir()
    listen = _free_port()
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    upstream = "".join(f"        server 127.0.0.1:{p};\n" for p in ports)
    conf, n_up = re.subn(r"(?:        server 127\.0\.0\.1:\d+;\n)+", upstream, conf)
    conf, n_listen = re.subn(r"listen \d+;", f"listen 127.0.0.1:{listen};", conf)
    assert n_up == 1 and n_listen == 1, "deploy/nginx.conf changed shape: update this test's substitutions"
    (prefix / "nginx.conf").write_text(conf)
    nginx = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for p, proc in zip(ports, replicas):
            _wait_healthy(f"http://127.0.0.1:{p}/_stcore/health", proc, f"replica on {p}")
        _wait_healthy(f"http://127.0.0.1:{listen}/_stcore/health", nginx, "nginx")
        yield {"url": f"http://127.0.0.1:{listen}", "replicas": {f"127.0.0.1:{p}" for p in ports},
               "log": prefix / "logs" / "access.log"}
    finally:
        for proc in [nginx, *replicas]:
            proc.terminate()
        for proc in [nginx, *replicas]:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _get(url: str, cookie: str | None = None):
    req = urllib.request.Request(url, headers={"Cookie": f"explorer_id={cookie}"} if cookie else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers


def test_cookie_pins_a_browser_to_one_replica_and_spreads_the_class(proxy):
    first = _get(proxy["url"] + "/_stcore/health")
    cookie = next(m.group(1) for c in first.get_all("Set-Cookie") if (m := re.match(r"explorer_id=([^;]+)", c)))
    assert first["X-Explorer-Replica"] in proxy["replicas"]
    assert {_get(proxy["url"] + "/_stcore/health", cookie)["X-Explorer-Replica"] for _ in range(5)} == {
        first["X-Explorer-Replica"]}
    spread = {_get(proxy["url"] + "/_stcore/health", f"student-{i}")["X-Explorer-Replica"] for i in range(40)}
    assert spread == proxy["replicas"]


def test_browser_session_through_the_proxy_stays_on_one_replica(proxy):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1800})
        page = context.new_page()
        page.goto(proxy["url"] + "/?ui.lang=English", wait_until="domcontentloaded")
        page.wait_for_selector(CHART, timeout=120_000)
        _assert_clean(page)
        chart = '[data-testid="stPlotlyChart"]'
        before = page.locator(chart).first.inner_html()
        layers = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text="Layers L")
        handle = layers.locator('input[type="range"]').first
        handle.focus()
        handle.press("ArrowRight")  # a rerun over the websocket
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); return e && e.innerHTML !== old; }",
            arg=[chart, before], timeout=90_000)
        assert "cfg.num_hidden_layers=3" in page.url
        page.get_by_role("link", name="Layer norms").click()  # another page, same session
        page.wait_for_url(re.compile(r"/norms"), timeout=60_000)
        page.wait_for_selector(CHART, timeout=120_000)
        page.wait_for_timeout(500)
        _assert_clean(page)
        assert "cfg.num_hidden_layers=3" in page.url  # the session kept its state across the page switch
        cookie = next(c["value"] for c in context.cookies() if c["name"] == "explorer_id")
        context.close()  # closes the websocket: nginx logs the stream request now
        browser.close()

    deadline = time.time() + 20
    while True:
        mine = [line for line in proxy["log"].read_text().splitlines() if f"id={cookie}" in line]
        if any("/_stcore/stream" in line and '" 101 ' in line for line in mine) or time.time() > deadline:
            break
        time.sleep(0.5)
    assert any("/_stcore/stream" in line and '" 101 ' in line for line in mine), mine[-5:]
    upstreams = {re.search(r"upstream=(\S+)", line).group(1) for line in mine}
    assert len(upstreams) == 1 and upstreams <= proxy["replicas"], upstreams
