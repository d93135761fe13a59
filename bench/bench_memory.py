"""Server memory under a class: RSS after 20 sessions on 20 configs, then 20 more on 20 other configs.

One process plays the server: AppTest sessions share the process-wide ``st.cache_resource`` / ``st.cache_data``
exactly like the sessions of one ``streamlit run`` (all sessions are kept alive until the end). Each session
opens the overview, attention and Pre-vs-Post pages (the pages with the largest cached objects: model,
full-cache trace, the pre/post model pair) on its own config -- medium models a lecturer might pick
(hidden 128..512, 2..12 layers, vocab 2000..16000).

Reported (VmRSS of this process, MiB):
    idle     after imports and one session at the defaults
    round 1  after 20 sessions on configs A1..A20
    round 2  after 20 further sessions on configs B1..B20 (none shared with round 1)
Round 2 must not grow much beyond round 1: the caches' max_entries bound what stays resident.
Also printed: the bytes of the largest config's model and trace, to size the worst case (see deploy.md).
Target: <= 1.5 GB after the rounds.

Usage: ``python bench/bench_memory.py [--sessions 20]`` -> bench/results/bench_memory.md

``--class [--smollm2 20] [--sessions 20] [--settle 60] [--code-root DIR ...]``: memory that comes back, on a real
``streamlit run`` per code root (``OMP_NUM_THREADS=1``), with simulated students (bench/loadsim.py). First one
student opens the Attention page on SmolLM2 and closes the tab; ``--settle`` s later the server's RSS is the
reference, "SmolLM2 loaded, no session". Then ``--smollm2`` students open Attention on SmolLM2, each with a text
new to the server, and ``--sessions`` students open Attention and the Overview on a medium config each (the
configs above), arriving 0.5 s apart and all kept open until every one has finished; then every tab closes.
Reported: the peak RSS (sampled every 0.25 s; target <= 2.5 GB) and the RSS ``--settle`` s after the tabs
closed, against the reference (target <= 1.3x).
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

from common import RESULTS, ROOT, write_result  # noqa: E402  (first: puts the project root on sys.path)

import torch  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from ui.sidebar import DEFAULTS  # noqa: E402

PAGES = ["app_pages/overview.py", "app_pages/attention.py", "app_pages/prepost.py"]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def config_state(i: int) -> dict:
    hidden = [128, 256, 384, 512][i % 4]
    return {
        "cfg.vocab_size": [2000, 4000, 8000, 16000][(i // 4) % 4],
        "cfg.hidden_size": hidden,
        "cfg.num_hidden_layers": [2, 4, 6, 8, 12][i % 5],
        "cfg.num_attention_heads": 8,
        "cfg.num_key_value_heads": 8,
        "cfg.intermediate_size": 4 * hidden if 4 * hidden in (512, 1024, 2048) else 1024,
        "cfg.seed": 100 + i,
    }


def session(state: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "explorer.py"), default_timeout=600)
    at.run()
    for page in PAGES:
        at.switch_page(page).run()
        for _ in range(2):  # settle select_sliders whose options depend on other values
            for k, v in {**DEFAULTS, "ui.lang": "en", **state}.items():
                at.session_state[k] = v
            at.run()
        assert not at.exception, [e.message for e in at.exception]
    return at


def server_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main_server(n: int) -> None:
    """The same two rounds against a real ``streamlit run app.py``: one browser context per session (kept
    open), each opening the attention and pre-vs-post pages with its config in the URL (bound widgets)."""
    from urllib.parse import urlencode

    from playwright.sync_api import sync_playwright

    from bench.bench_browser import ARGS, CHROMIUM, free_port, open_page, start_server

    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    t0 = time.time()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            contexts = []
            ctx = browser.new_context()
            contexts.append(ctx)
            open_page(ctx, f"{base}/attention?ui.lang=English")
            time.sleep(2)
            idle = server_rss_mib(server.pid)
            rounds = []
            for r in range(2):
                for i in range(n):
                    state = config_state(r * n + i)
                    query = urlencode({"ui.lang": "English", **state})
                    ctx = browser.new_context()
                    contexts.append(ctx)
                    for url in ("attention", "pre-vs-post"):
                        page, _ = open_page(ctx, f"{base}/{url}?{query}")
                    if len(contexts) > 6:  # keep the sessions open but limit the browser's own memory
                        for pg in contexts[-2].pages:
                            pg.close()
                time.sleep(3)
                rounds.append(server_rss_mib(server.pid))
                print(f"server round {r + 1}: {rounds[-1]:.0f} MiB ({time.time() - t0:.0f} s)", flush=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    text = "\n".join([
        "", "## Real server (`streamlit run app.py`, chromium contexts)", "",
        f"{time.strftime('%Y-%m-%d %H:%M')}: each session opens attention and pre-vs-post with its config in the URL.",
        "", "| state | server RSS (MiB) | vs idle |", "|---|---:|---:|",
        f"| idle (1 default session) | {idle:.0f} | - |",
        f"| after round 1 ({n} configs) | {rounds[0]:.0f} | +{rounds[0] - idle:.0f} |",
        f"| after round 2 ({n} other configs) | {rounds[1]:.0f} | +{rounds[1] - idle:.0f} |", ""])
    print(text)
    out = RESULTS / "bench_memory.md"
    out.write_text((out.read_text() if out.exists() else "") + text)


def class_memory(root: Path, n_smol: int, n_medium: int, settle: float) -> dict:
    """RSS of a server of ``root``: SmolLM2 loaded and no session, the peak under the class, after it left."""
    import asyncio

    from bench.bench_class import CHECKPOINT, SOURCE_LABEL, fresh_text
    from bench.loadsim import Server, Student

    async def smollm2(s: Student, text: str) -> bool:
        first = await s.run({"ui.lang": "English", "input.text": text}, "attention", timeout=1800)
        v, _ = await s.pick(SOURCE_LABEL, CHECKPOINT, first, timeout=1800)
        return v.finished and not v.exceptions

    async def medium(s: Student, i: int) -> bool:
        ok = True
        for page in ("attention", "overview"):
            v = await s.run({"ui.lang": "English", **config_state(i)}, page, timeout=1800)
            ok &= v.finished and not v.exceptions
        return ok

    async def first_tab(port: int) -> None:
        async with Student(port) as s:
            await smollm2(s, fresh_text())

    async def the_class(port: int) -> list[bool]:
        students = []

        async def arrive(k: int) -> bool:
            await asyncio.sleep(0.5 * k)
            s = Student(port)
            await s.__aenter__()
            students.append(s)
            return await (smollm2(s, fresh_text()) if k < n_smol else medium(s, k - n_smol))

        try:
            return list(await asyncio.gather(*[arrive(k) for k in range(n_smol + n_medium)]))
        finally:
            for s in students:  # every tab closes
                await s.__aexit__(None, None, None)

    server = Server(env={"OMP_NUM_THREADS": "1"}, root=root)
    t0 = time.time()
    try:
        asyncio.run(first_tab(server.port))
        time.sleep(settle)
        base = server.rss()
        server.peak_rss = base
        oks = asyncio.run(the_class(server.port))
        seconds = time.time() - t0
        closed = server.rss()
        time.sleep(settle)
        return {"base": base, "peak": server.peak_rss, "closed": closed, "after": server.rss(),
                "ok": sum(oks), "views": len(oks), "seconds": seconds}
    finally:
        server.close()


def main_class(args) -> None:
    import os
    import subprocess

    lines = ["", f"## Memory that comes back: {args.smollm2} SmolLM2 + {args.sessions} medium sessions on a real "
             f"server ({time.strftime('%Y-%m-%d %H:%M')})", "",
             f"`python bench/bench_memory.py --class --smollm2 {args.smollm2} --sessions {args.sessions} --settle "
             f"{args.settle:.0f}`; load average {os.getloadavg()[0]:.1f} at the start. Reference: the server's RSS "
             f"{args.settle:.0f} s after one SmolLM2 tab closed (SmolLM2 loaded, no session).", "",
             "| code | reference MiB | peak MiB (target <= 2,560) | when the tabs closed MiB | "
             f"{args.settle:.0f} s later MiB | later / reference (target <= 1.3x) | students ok |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for root in args.code_root or [ROOT]:
        r = class_memory(root.resolve(), args.smollm2, args.sessions, args.settle)
        rev = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h"], capture_output=True, text=True)
        m = {k: r[k] / 2**20 for k in ("base", "peak", "closed", "after")}
        lines.append(f"| `{rev.stdout.strip() or root.name}` | {m['base']:,.0f} | {m['peak']:,.0f} | "
                     f"{m['closed']:,.0f} | {m['after']:,.0f} | **{m['after'] / m['base']:.2f}x** | "
                     f"{r['ok']} / {r['views']} ({r['seconds']:.0f} s) |")
        print(lines[-1], flush=True)
    lines.append(f"\nLoad average at the end {os.getloadavg()[0]:.1f}.")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        out = RESULTS / "bench_memory.md"
        out.write_text((out.read_text() if out.exists() else "") + text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--server", action="store_true", help="measure a real streamlit server instead of AppTest")
    ap.add_argument("--class", dest="klass", action="store_true", help="memory that comes back (see the docstring)")
    ap.add_argument("--smollm2", type=int, default=20)
    ap.add_argument("--settle", type=float, default=60.0)
    ap.add_argument("--code-root", action="append", type=Path)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    n = args.sessions
    if args.klass:
        main_class(args)
        return
    if args.server:
        main_server(n)
        return
    t0 = time.time()
    alive = [session({})]
    gc.collect()
    idle = rss_mib()
    rounds = []
    for r in range(2):
        for i in range(n):
            alive.append(session(config_state(r * n + i)))
        gc.collect()
        rounds.append(rss_mib())
        print(f"round {r + 1}: {rounds[-1]:.0f} MiB ({time.time() - t0:.0f} s)", flush=True)

    from engine import CausalLM
    from analysis.trace import run_trace
    from tests.page_helpers import state_config

    big_state = max((config_state(i) for i in range(2 * n)),
                    key=lambda s: s["cfg.hidden_size"] ** 2 * s["cfg.num_hidden_layers"] + s["cfg.vocab_size"] * s["cfg.hidden_size"])
    config, seed = state_config(**big_state)
    model = CausalLM(config)
    model_mib = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    out = run_trace(model, torch.randint(0, config.vocab_size, (1, 22)))
    tensors = [out.logits] + list(out.hidden_states or []) + list(out.attentions or []) + list((out.activations or {}).values())
    trace_mib = sum(t.numel() * t.element_size() for t in tensors) / 2**20

    lines = [
        "# bench_memory: RSS of one server process under 2 x {n} sessions".format(n=n),
        "",
        f"{time.strftime('%Y-%m-%d %H:%M')}. AppTest sessions in one process (shared caches, all sessions kept "
        f"alive); each session opens {', '.join(Path(p).stem for p in PAGES)} on its own config "
        "(hidden 128-512, 2-12 layers, vocab 2000-16000). Target <= 1536 MiB.",
        "",
        "| state | RSS (MiB) | vs idle |",
        "|---|---:|---:|",
        f"| idle (imports + 1 default session) | {idle:.0f} | - |",
        f"| after round 1 ({n} configs) | {rounds[0]:.0f} | +{rounds[0] - idle:.0f} |",
        f"| after round 2 ({n} other configs) | {rounds[1]:.0f} | +{rounds[1] - idle:.0f} |",
        "",
        f"Round 2 / round 1 growth: {(rounds[1] - idle) / max(rounds[0] - idle, 1):.2f}x. "
        f"Largest config here ({config.num_hidden_layers} layers, H={config.hidden_size}, V={config.vocab_size}): "
        f"model {model_mib:.0f} MiB float32, trace of 22 tokens {trace_mib:.0f} MiB.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    write_result("bench_memory", text)


if __name__ == "__main__":
    main()
