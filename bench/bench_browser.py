"""Real-browser latency and bytes: Playwright + Debian chromium against ``streamlit run app.py``.

Measured (medians of ``--repeats``), all in the same run:

    layers_cold  focus the sidebar's "Layers L" slider, press ArrowRight (a layer count never built before in
                 this server), until the first chart's HTML changes: model build + trace + rerun + render
    layers_warm  ArrowLeft / ArrowRight between two layer counts already built: cached model and trace
    step_warm    the overview's "Next" button (PageDown) until the step chart changes: a warm rerun that only
                 changes page-local state -- the reference for "a rerun that hits every cache"

Bytes per page: sum of websocket frame payloads the browser received from navigating to the page (fresh
browser context, defaults) until its charts are drawn and the app is idle.
Targets: change -> updated chart <= 1 s median; bytes per page <= 2 MB.

Usage: ``python bench/bench_browser.py [--repeats 7]`` -> bench/results/bench_browser.md
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from common import ROOT, write_result  # noqa: E402  (first: puts the project root on sys.path)

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
CHART = '[data-testid="stPlotlyChart"]'
URLS = [u for u in re.findall(r'"app_pages/\w+\.py", "[\w.]+", "([\w-]+)"', (ROOT / "explorer.py").read_text())]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, extra_env: dict | None = None) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", **(extra_env or {}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("server did not start")


def wait_idle(page, timeout_ms: int = 60_000) -> None:
    """Until the app reports no script running (the status widget's running indicator is gone)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)


def open_page(context, url: str):
    page = context.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    received = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.append(
        len(payload) if isinstance(payload, (bytes, str)) else 0)))
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=120_000)
    wait_idle(page, 120_000)
    if page.query_selector(CHART):  # pages without charts at the defaults (train) just need to be idle
        page.wait_for_selector(CHART + " .main-svg", timeout=60_000)
    page.wait_for_timeout(500)
    return page, received


def first_chart_html(page) -> str:
    return page.eval_on_selector(CHART, "e => e.innerHTML")


def timed_change(page, action, selector_index: int = 0, timeout_ms: int = 60_000) -> float:
    """Seconds from ``action()`` until the selector_index-th chart's innerHTML differs, then wait idle."""
    page.wait_for_function(f"() => document.querySelectorAll('{CHART}').length > {selector_index}", timeout=timeout_ms)
    before = page.eval_on_selector_all(CHART, f"(es) => es[{selector_index}].innerHTML")
    t0 = time.perf_counter()
    action()
    page.wait_for_function(
        f"(b) => {{ const es = document.querySelectorAll('{CHART}'); return es.length > {selector_index} && "
        f"es[{selector_index}].innerHTML !== b; }}", arg=before, timeout=timeout_ms, polling=20)
    dt = time.perf_counter() - t0
    print(f"  change after {dt * 1e3:.0f} ms", flush=True)
    wait_idle(page)
    page.wait_for_timeout(200)
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    rows: dict[str, list[float]] = {"layers_cold": [], "layers_warm": [], "step_warm": []}
    bytes_per_page: dict[str, int] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            # ---- bytes per page: a fresh context per page (no browser cache), after one warm-up visit ----
            for url in URLS:
                ctx = browser.new_context()
                page, _ = open_page(ctx, f"{base}/{url}?ui.lang=English")  # warm the server caches
                ctx.close()
                ctx = browser.new_context()
                page, received = open_page(ctx, f"{base}/{url}?ui.lang=English")
                bytes_per_page[url] = sum(received)
                print(url, bytes_per_page[url], flush=True)
                ctx.close()
            # ---- latency on the overview page ----
            ctx = browser.new_context()
            page, _ = open_page(ctx, f"{base}/?ui.lang=English")
            slider = page.get_by_role("slider", name=re.compile("Layers"))
            for _ in range(args.repeats):
                slider.focus()
                rows["layers_cold"].append(timed_change(page, lambda: page.keyboard.press("ArrowRight")))
            for i in range(args.repeats):  # between two counts already built (all cached now)
                slider.focus()
                key = "ArrowLeft" if i % 2 == 0 else "ArrowRight"
                rows["layers_warm"].append(timed_change(page, lambda: page.keyboard.press(key)))
            nxt = page.get_by_role("button", name=re.compile("Next"))
            prev = page.get_by_role("button", name=re.compile("Prev|Back"))
            for i in range(args.repeats):  # step chart (the second chart) changes with the step
                btn = nxt if i % 2 == 0 else prev
                rows["step_warm"].append(timed_change(page, btn.click, selector_index=1))
            ctx.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)

    med = {k: statistics.median(v) * 1e3 for k, v in rows.items()}
    lines = [
        "# bench_browser: slider change -> updated chart, and bytes per page (real chromium)",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M')}, {args.repeats} repeats, `streamlit run app.py` on this machine, "
        "Playwright + /usr/bin/chromium (headless). Target: <= 1000 ms median; <= 2 MB per page.",
        "",
        "| interaction (overview page) | median (ms) | x step_warm | all (ms) |",
        "|---|---:|---:|---|",
    ]
    for k, v in rows.items():
        lines.append(f"| {k} | {med[k]:.0f} | {med[k] / med['step_warm']:.2f} | {', '.join(f'{x * 1e3:.0f}' for x in v)} |")
    lines += ["", "| page | websocket bytes received (defaults) | within 2 MB |", "|---|---:|---|"]
    for url, b in bytes_per_page.items():
        lines.append(f"| {url} | {b / 1024:,.0f} KiB | {'yes' if b <= 2 * 2**20 else '**no**'} |")
    text = "\n".join(lines) + "\n"
    print(text)
    write_result("bench_browser", text)


if __name__ == "__main__":
    main()
