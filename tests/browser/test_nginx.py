"""deploy/nginx.conf in front of two `streamlit run` replicas on localhost: sticky, websocket-aware sessions.

nginx (Debian package) runs in the foreground with a temporary prefix; the repository's config is used as is,
except for its ports: free ones are picked, for nginx's ``listen`` and for the two replicas (every ``:8501`` and
``:8502`` in it: the upstream servers and the map that names the replica that answered). Checks:

* plain HTTP: a browser without the cookie gets an ``explorer_id`` cookie; the same cookie always reaches the
  same replica; forty different cookies reach both replicas (so the class is spread);
* a real browser through the proxy: the page loads, a slider rerun redraws the chart, clicking another page in
  the navigation works, no exception; nginx's access log shows every request of that browser, including the
  ``/_stcore/stream`` websocket (status 101), went to one replica;
* a replica killed and restarted (the last test: it leaves both replicas up): the browser it served reconnects to
  the other one, and once the killed replica is back, everything that browser asks for, the chart's CSV download
  included, still goes to the survivor, none answers 404, and the charts draw.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser_support import CHART, free_port as _free_port, settle, wait_text
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


def _start_replica(port: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    assert Path(NGINX).exists(), "nginx not found: install Debian's nginx (see .ci/run)"
    ports = [_free_port(), _free_port()]
    prefix = tmp_path_factory.mktemp("nginx")
    (prefix / "logs").mkdir()
    listen = _free_port()
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    counts = []
    for default, port in zip((8501, 8502), ports):
        conf, n = re.subn(rf":{default}\b", f":{port}", conf)  # a replica's upstream, its backup line, its map line
        counts.append(n)
    conf, n_listen = re.subn(r"listen \d+;", f"listen 127.0.0.1:{listen};", conf)
    assert counts == [3, 3] and n_listen == 1, "deploy/nginx.conf changed shape: update this test's substitutions"
    (prefix / "nginx.conf").write_text(conf)
    replicas = {f"127.0.0.1:{p}": _start_replica(p) for p in ports}  # address -> process (a restart replaces it)
    nginx = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def restart(addr: str) -> None:
        """Start the replica at ``addr`` again (on its port) and wait until it is healthy."""
        replicas[addr] = _start_replica(int(addr.rsplit(":", 1)[1]))
        _wait_healthy(f"http://{addr}/_stcore/health", replicas[addr], f"replica on {addr}")

    try:
        for addr, proc in replicas.items():
            _wait_healthy(f"http://{addr}/_stcore/health", proc, f"replica on {addr}")
        _wait_healthy(f"http://127.0.0.1:{listen}/_stcore/health", nginx, "nginx")
        yield {"url": f"http://127.0.0.1:{listen}", "replicas": set(replicas), "procs": replicas,
               "restart": restart, "log": prefix / "logs" / "access.log"}
    finally:
        procs = [nginx, *replicas.values()]
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _get(url: str, cookie: str | None = None):
    req = urllib.request.Request(url, headers={"Cookie": f"explorer_id={cookie}"} if cookie else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers


def _logged(proxy, cookie: str, start: int = 0, seconds: float = 20) -> list[str]:
    """The access log's lines of one browser (its ``explorer_id``) from byte ``start`` on, once they include its
    websocket: nginx logs ``/_stcore/stream`` (status 101) when it closes."""
    deadline = time.time() + seconds
    while True:
        with open(proxy["log"], "rb") as f:
            f.seek(start)
            mine = [line for line in f.read().decode().splitlines() if f" id={cookie} " in line + " "]
        if any("/_stcore/stream" in line and '" 101 ' in line for line in mine) or time.time() > deadline:
            break
        time.sleep(0.5)
    assert any("/_stcore/stream" in line and '" 101 ' in line for line in mine), mine[-5:]
    return mine


def _upstream(line: str) -> str:
    return line.rsplit(" upstream=", 1)[1]  # last in the line; "A, B" when A did not answer and B did


def _open(browser, url: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(url + "/?ui.lang=English", wait_until="domcontentloaded")
    page.wait_for_selector(CHART, timeout=120_000)
    settle(page)
    _assert_clean(page)
    return context, page


def _rerun_with_slider(page) -> None:
    """One step of the sidebar's Layers slider: a rerun over the websocket; waits until the chart is redrawn."""
    chart = '[data-testid="stPlotlyChart"]'
    before = page.locator(chart).first.inner_html()
    layers = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text="Layers L")
    handle = layers.locator('input[type="range"]').first
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(
        "([sel, old]) => { const e = document.querySelector(sel); return e && e.innerHTML !== old; }",
        arg=[chart, before], timeout=90_000)
    settle(page)


def _open_norms(page) -> None:
    page.get_by_role("link", name="Layer norms").click()  # another page, same session
    page.wait_for_url(re.compile(r"/norms"), timeout=60_000)
    page.wait_for_selector(CHART, timeout=120_000)
    settle(page)
    _assert_clean(page)


def _explorer_id(context) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "explorer_id")


def test_cookie_pins_a_browser_to_one_replica_and_spreads_the_class(proxy):
    first = _get(proxy["url"] + "/_stcore/health")
    cookie = next(m.group(1) for c in first.get_all("Set-Cookie") if (m := re.match(r"explorer_id=([^;]+)", c)))
    assert first["X-Explorer-Replica"] in proxy["replicas"]
    assert {_get(proxy["url"] + "/_stcore/health", cookie)["X-Explorer-Replica"] for _ in range(5)} == {
        first["X-Explorer-Replica"]}
    spread = {_get(proxy["url"] + "/_stcore/health", f"student-{i}")["X-Explorer-Replica"] for i in range(40)}
    assert spread == proxy["replicas"]


def test_browser_session_through_the_proxy_stays_on_one_replica(proxy, browser):
    context, page = _open(browser, proxy["url"])
    _rerun_with_slider(page)
    assert "cfg.num_hidden_layers=3" in page.url
    _open_norms(page)
    assert "cfg.num_hidden_layers=3" in page.url  # the session kept its state across the page switch
    cookie = _explorer_id(context)
    context.close()  # closes the websocket: nginx logs the stream request now

    upstreams = {_upstream(line) for line in _logged(proxy, cookie)}
    assert len(upstreams) == 1 and upstreams <= proxy["replicas"], upstreams


def test_a_class_started_through_one_replica_is_joined_and_answered_through_the_other(proxy, browser):
    """Class mode across replicas (one machine, one SQLite store): the lecturer's browser is routed to replica r1,
    a student's phone page to r2 (their route cookies); the student joins by the link, answers, and the lecturer's
    live count on the other replica shows it; the reveal reaches the student with the chart the lecturer's replica
    drew (kept in the store)."""
    url = proxy["url"]
    pages = {}
    for who, route in (("lecturer", "r1"), ("student", "r2")):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_cookies([{"name": "explorer_route", "value": route, "url": url}])
        pages[who] = context.new_page()
        pages[who].set_default_timeout(90_000)
    lecturer, student = pages["lecturer"], pages["student"]
    served = {}
    for who, page in pages.items():
        page.on("response", lambda r, who=who: served.setdefault(who, set()).add(r.headers.get("x-explorer-replica")))
    lecturer.goto(url + "/attention?lesson=numpy_decoder&step=1&ui.lang=English")
    lecturer.wait_for_selector('[data-testid="stSidebar"]')
    settle(lecturer)
    lecturer.locator('[data-testid="stSidebar"]').get_by_text("Class mode").click()
    lecturer.locator(".st-key-class-start button").first.click()
    lecturer.wait_for_selector(".st-key-class-count", timeout=90_000)
    code = re.search(r"Class ([A-HJ-NP-Z2-9]{6})", lecturer.locator(".st-key-class-count").inner_text()).group(1)
    student.goto(f"{url}/join/{code}?lang=en")
    student.locator("#options button").nth(2).click()
    student.wait_for_function("() => document.querySelector('#status').innerText.includes('Sent')", timeout=60_000)
    wait_text(lecturer, ".st-key-class-count", "1 of 1 answered", timeout=60_000)
    settle(lecturer)
    lecturer.locator(".st-key-class-reveal button").click()
    student.wait_for_selector(".verdict", timeout=60_000)
    student.wait_for_selector("#chart .main-svg", timeout=120_000)  # drawn on r1, kept in the store, served by r2
    served = {who: {a for a in addrs if a} for who, addrs in served.items()}
    assert len(served["lecturer"]) == 1 and len(served["student"]) == 1 and served["lecturer"] != served["student"], served
    _assert_clean(lecturer)
    for page in pages.values():
        page.context.close()


def test_a_browser_moved_by_a_failover_stays_on_the_survivor_when_its_replica_returns(proxy, browser):
    """The last test of the module: it kills a replica (SIGKILL, as a crash) and starts it again."""
    context, page = _open(browser, proxy["url"])
    responses: list[tuple[int, str]] = []
    page.on("response", lambda r: responses.append((r.status, r.url)))
    sockets: list = []  # websockets opened after the kill
    page.on("websocket", lambda ws: sockets.append(ws))
    home = page.evaluate("() => fetch('/_stcore/health').then(r => r.headers.get('X-Explorer-Replica'))")
    (survivor,) = proxy["replicas"] - {home}
    cookie = _explorer_id(context)

    proxy["procs"][home].send_signal(signal.SIGKILL)
    proxy["procs"][home].wait(timeout=20)
    deadline = time.time() + 90  # Streamlit's frontend reconnects: through nginx, to the survivor
    while not sockets and time.time() < deadline:
        page.wait_for_timeout(250)
    assert sockets, "the page did not reconnect after its replica was killed"
    _rerun_with_slider(page)  # the survivor runs the page for the browser's widgets (a new session there)
    _assert_clean(page)
    moved, moved_at = proxy["log"].stat().st_size, time.time()  # every request from here on: the survivor only

    proxy["restart"](home)
    # nginx tries a server that failed again after fail_timeout (10 s): the old config's hash sent this browser's
    # requests back to the restored replica from then on
    time.sleep(max(0.0, moved_at + 11 - time.time()))
    after = len(responses)
    _rerun_with_slider(page)
    csv = page.locator('[data-testid="stDownloadButton"] button', has_text="Download data (CSV)").first
    with page.expect_download(timeout=60_000) as info:
        csv.click()  # the file is made by this session (on the survivor) and fetched over HTTP
    download = info.value
    failure, body = download.failure(), None
    if failure is None:
        body = Path(download.path()).read_text()
    _open_norms(page)
    page.wait_for_timeout(500)
    _assert_clean(page)
    bad = [(status, url) for status, url in responses[after:] if status >= 400]
    context.close()

    mine = _logged(proxy, cookie, start=moved)
    assert not bad, bad
    assert failure is None and body and body.count("\n") > 1, (failure, body and body[:200])
    assert {_upstream(line) for line in mine} == {survivor}, [line for line in mine if _upstream(line) != survivor]
    assert any("/media/" in line and '" 200 ' in line for line in mine), mine
