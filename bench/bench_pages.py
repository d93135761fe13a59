"""Server-side rerun time and bytes per page at the defaults, warm caches (AppTest, one process).

For each page of ``explorer.py``: open a session, switch to the page, run until warm, then time ``--repeats``
reruns (a rerun = what a widget change that hits the caches costs on the server: the whole script, widgets,
cached model/trace lookups, analysis DataFrames, figure building and serialisation). References measured in
the same run, interleaved with the pages (see bench/common.py):

    empty    a trivial script (``st.write``) -- AppTest's own per-run overhead
    sidebar  a page that only calls ``ui.sidebar.explorer()`` -- the shared sidebar's cost on every page

Bytes: the sum of ``ByteSize()`` of the ForwardMsgs a rerun produces (the deltas the server would send; the
browser benchmark measures the websocket frames for real). Targets: rerun median <= 150 ms, bytes <= 2 MB.

Usage: ``python bench/bench_pages.py [--repeats 15] [--threads 2]`` -> bench/results/bench_pages.md

``--whole [--rounds 3] [--code-root DIR ...]``: a whole page, cold, on a real server instead. One ``streamlit run``
per code root (``OMP_NUM_THREADS=1``; another checkout's app measures the code before a change the same way), one
simulated student per view (bench/loadsim.py) opening ``--whole-pages`` (default: Norm placement and the Overview,
its reference) at the defaults with a seed new to the server, so each view builds its model and computes every
chart; timed from the request until the script finished, i.e. every chart drawn. Pages interleaved, the order
rotating per round; reported: each page's median and its ratio to the Overview's in the same run (target for
Norm placement <= 2x). Appends to bench/results/bench_pages.md.

``--every [--smollm2] [--rounds 2] [--code-root DIR ...] [--every-pages URL ...] [--presenter]``: every model page of
the app (not the Lessons list; or the pages named; in presenter mode), whole and cold the same way, against "one
plain forward of the same text plus drawing". The forward: ``bench/plain_forward_page.py`` (the shared sidebar, one
``model(ids)`` without a record, one chart) on a server of its own, cold, right before each page's views; each view
has its own new seed (the default model) or its own new text (``--smollm2``: the text in the link, then SmolLM2
picked in the sidebar, that pick timed; the weights loaded once per server before timing). Each code root (another
checkout: the code before a change) gets its own app server, measured against the same reference, interleaved. The drawing: the same view run again at once in the same
session (every cache hit: the page's widgets, charts and Streamlit's own work), less the reference's such rerun (its
sidebar and one chart are in the reference already). Reported per page: cold ÷ (reference cold + page rerun -
reference rerun); target <= 3. Appends to bench/results/bench_pages.md.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from common import RESULTS, ROOT  # noqa: E402  (first: puts the project root on sys.path)

import torch  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from streamlit.testing.v1 import local_script_runner  # noqa: E402

from ui.sidebar import DEFAULTS  # noqa: E402

PAGES = re.findall(r'"(app_pages/\w+\.py)"', (ROOT / "explorer.py").read_text())
TARGET_MS, TARGET_BYTES = 150.0, 2 * 2**20

_bytes: list[int] = []
_real_parse = local_script_runner.parse_tree_from_messages


def _recording_parse(msgs):
    _bytes.append(sum(m.ByteSize() for m in msgs))
    return _real_parse(msgs)


local_script_runner.parse_tree_from_messages = _recording_parse


def _session(page: str | None, script: Path | None = None) -> AppTest:
    if script is not None:
        at = AppTest.from_file(str(script), default_timeout=300)
        at.run()
        return at
    at = AppTest.from_file(str(ROOT / "explorer.py"), default_timeout=300)
    at.run()
    at.switch_page(page).run()
    for k, v in {**DEFAULTS, "ui.lang": "en"}.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def whole_pages(root: Path, pages: list[str], rounds: int) -> dict[str, list[float]]:
    """Seconds from request to script finished of each page, cold (a new seed per view), on a server of ``root``."""
    import asyncio

    from bench.loadsim import Server, Student

    async def view(port: int, page: str, seed: int) -> float:
        async with Student(port) as s:
            v = await s.run({"ui.lang": "English", "cfg.seed": seed}, page, timeout=900)
        assert v.finished and not v.exceptions and v.charts > 0, (page, v.exceptions)
        return v.seconds

    server = Server(env={"OMP_NUM_THREADS": "1"}, root=root)
    times: dict[str, list[float]] = {p: [] for p in pages}
    try:
        asyncio.run(view(server.port, pages[-1], 999))  # imports and first-use costs: not timed
        seed = 1000
        for r in range(rounds):
            for page in pages[r % len(pages):] + pages[: r % len(pages)]:
                seed += 1
                times[page].append(asyncio.run(view(server.port, page, seed)))
    finally:
        server.close()
    return times


EVERY = [url for url in re.findall(r'"app_pages/\w+\.py", "[\w.]+", "([\w-]+)"', (ROOT / "explorer.py").read_text())
         if url != "lessons"]


def every_page(rounds: int, smollm2: bool, roots: list[Path], pages: list[str] = EVERY, presenter: bool = False
               ) -> tuple[list, dict[Path, dict[str, list]]]:
    """(cold, rerun) seconds, request to script finished, of the reference page and, on one server per code root, of
    each of ``pages`` (default: ``EVERY``) right after it: a new seed (default model) or a new text (SmolLM2) per
    view, then the same view again at once. Returns the reference's pairs and each root's pairs per page."""
    import asyncio

    from bench.bench_class import CHECKPOINT, SOURCE_LABEL, fresh_text
    from bench.loadsim import Server, Student

    async def view(port: int, page: str, seed: int) -> tuple[float, float]:
        async with Student(port) as s:
            common = {"ui.lang": "English", **({"ui.presenter": "true"} if presenter else {})}
            v = await s.run({**common, "input.text": fresh_text()} if smollm2 else {**common, "cfg.seed": seed}, page,
                            timeout=900)
            picked = []
            if smollm2:
                v, ws = await s.pick(SOURCE_LABEL, CHECKPOINT, v, timeout=1800)
                picked = [ws]
            again = await s.run(s.query, page, widgets=picked, timeout=900)
        for w in (v, again):
            assert w.finished and not w.exceptions, (page, w.exceptions)
        return v.seconds, again.seconds

    env = {"OMP_NUM_THREADS": "1"}
    ref = Server(env=env, script=str(ROOT / "bench" / "plain_forward_page.py"))  # the current checkout's, for all
    apps = {root: Server(env=env, root=root) for root in roots}
    ref_times: list[tuple[float, float]] = []
    times = {root: {p: [] for p in pages} for root in roots}
    try:
        for port, page in [(ref.port, ""), *[(app.port, p) for app in apps.values() for p in pages]]:
            asyncio.run(view(port, page, 999))  # imports, weights: not timed
        seed = 1000
        for r in range(rounds):
            for page in pages[r % len(pages):] + pages[: r % len(pages)]:
                seed += 1
                ref_times.append(asyncio.run(view(ref.port, "", seed)))
                order = roots[r % len(roots):] + roots[: r % len(roots)]
                for root in order:
                    seed += 1
                    times[root][page].append(asyncio.run(view(apps[root].port, page, seed)))
                print(page, {root.name: times[root][page][-1] for root in roots}, "reference", ref_times[-1], flush=True)
    finally:
        ref.close()
        for app in apps.values():
            app.close()
    return ref_times, times


def append_result(lines: list[str], no_write: bool) -> None:
    """Print a whole-page table and append it to bench/results/bench_pages.md (unless ``no_write``)."""
    text = "\n".join(lines) + "\n"
    print(text)
    if not no_write:
        RESULTS.mkdir(exist_ok=True)
        out = RESULTS / "bench_pages.md"
        out.write_text((out.read_text() if out.exists() else "") + text)


def main_every(args) -> None:
    import subprocess

    model = "SmolLM2-135M (a new text per view)" if args.smollm2 else "the default model (a new seed per view)"
    load = os.getloadavg()[0]
    roots = [r.resolve() for r in args.code_root or [ROOT]]
    pages = args.every_pages or EVERY
    ref, times = every_page(args.rounds, args.smollm2, roots, pages, args.presenter)
    ref_cold, ref_again = (statistics.median(t[i] for t in ref) for i in (0, 1))
    labels = [subprocess.run(["git", "-C", str(r), "log", "-1", "--format=%h"], capture_output=True,
                             text=True).stdout.strip() or r.name for r in roots]
    lines = ["", f"## Every page, whole and cold, ÷ one plain forward plus drawing ({time.strftime('%Y-%m-%d %H:%M')})",
             "", f"`python bench/bench_pages.py --every --rounds {args.rounds}{' --smollm2' if args.smollm2 else ''}"
             f"{' --every-pages ' + ' '.join(pages) if args.every_pages else ''}"
             f"{' --presenter' if args.presenter else ''}`"
             f"{' (presenter mode, in the link)' if args.presenter else ''}: "
             f"{model}, request -> script finished, `OMP_NUM_THREADS=1`. The reference (`bench/plain_forward_page.py`:"
             f" sidebar, `model(ids)`, one chart) on a server of its own, cold before each page: median {ref_cold:.2f}"
             f" s, rerun {ref_again:.2f} s. Drawing = the page's rerun (every cache hit) - the reference's rerun. "
             f"Each cell: cold median s (rerun s) and cold ÷ (reference + drawing), target <= 3. Load average "
             f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.", "",
             "| page | " + " | ".join(f"`{label}`" for label in labels) + " |", "|---|" + "---:|" * len(roots)]
    for page in pages:
        cells = []
        for root in roots:
            cold, again = (statistics.median(t[i] for t in times[root][page]) for i in (0, 1))
            ratio = cold / (ref_cold + max(0.0, again - ref_again))
            cells.append(f"{cold:.2f} ({again:.2f}) {ratio:.2f}x{'' if ratio <= 3 else ' **over**'}")
        lines.append(f"| {page} | " + " | ".join(cells) + " |")
    append_result(lines, args.no_write)


def main_whole(args) -> None:
    import subprocess

    lines = ["", f"## Whole pages, cold, on a real server ({time.strftime('%Y-%m-%d %H:%M')})", "",
             f"`python bench/bench_pages.py --whole --rounds {args.rounds}`: each view a new seed at the defaults "
             "(model built, every chart computed), request -> script finished, `OMP_NUM_THREADS=1`, pages "
             f"interleaved; load average {os.getloadavg()[0]:.1f} at the start.", "",
             "| code | " + " | ".join(f"{p or 'overview'} median s (x overview)" for p in args.whole_pages) + " |",
             "|---|" + "---|" * len(args.whole_pages)]
    for root in args.code_root or [ROOT]:
        times = whole_pages(root.resolve(), args.whole_pages, args.rounds)
        med = {p: statistics.median(ts) for p, ts in times.items()}
        ref = med[args.whole_pages[-1]]
        rev = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h"], capture_output=True, text=True)
        label = rev.stdout.strip() or root.name
        lines.append(f"| `{label}` | " + " | ".join(f"{med[p]:.2f} ({med[p] / ref:.2f}x)" for p in args.whole_pages)
                     + " |")
        print(lines[-1], {p: [round(x, 2) for x in ts] for p, ts in times.items()}, flush=True)
    lines.append(f"\nLoad average at the end {os.getloadavg()[0]:.1f}.")
    append_result(lines, args.no_write)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--whole", action="store_true", help="whole pages, cold, on a real server (see the docstring)")
    ap.add_argument("--whole-pages", nargs="+", default=["pre-vs-post", "overview"],
                    help="url paths; the last one is the reference")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--code-root", action="append", type=Path)
    ap.add_argument("--every", action="store_true", help="every page ÷ one plain forward plus drawing (docstring)")
    ap.add_argument("--smollm2", action="store_true", help="with --every: on SmolLM2-135M")
    ap.add_argument("--every-pages", nargs="+", choices=EVERY, help="with --every: only these pages (url paths)")
    ap.add_argument("--presenter", action="store_true", help="with --every: presenter mode on (in the link)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.whole or args.every:
        (main_every if args.every else main_whole)(args)
        return
    torch.set_num_threads(args.threads)

    tmp = Path(tempfile.mkdtemp())
    (tmp / "empty.py").write_text('import streamlit as st\nst.write("hello")\n')
    (tmp / "sidebar.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport streamlit as st\n"
        "from ui.sidebar import explorer, trace\nctx = explorer()\ntrace(ctx)\nst.write('sidebar only')\n")

    sessions = {"empty": _session(None, tmp / "empty.py"), "sidebar": _session(None, tmp / "sidebar.py")}
    for k, v in {**DEFAULTS, "ui.lang": "en"}.items():
        sessions["sidebar"].session_state[k] = v
    sessions["sidebar"].run()
    for page in PAGES:
        sessions[Path(page).stem] = _session(page)

    names = list(sessions)
    for _ in range(2):  # warm
        for n in names:
            sessions[n].run()
    times: dict[str, list[float]] = {n: [] for n in names}
    sizes: dict[str, list[int]] = {n: [] for n in names}
    for r in range(args.repeats):
        order = names[r % len(names):] + names[: r % len(names)]
        for n in order:
            _bytes.clear()
            t0 = time.perf_counter()
            sessions[n].run()
            times[n].append((time.perf_counter() - t0) * 1e3)
            sizes[n].append(sum(_bytes))
            assert not sessions[n].exception, (n, [e.message for e in sessions[n].exception])

    med = {n: statistics.median(ts) for n, ts in times.items()}
    lines = [
        "# bench_pages: server-side rerun time and bytes per page (defaults, warm caches)",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M')}, torch threads {args.threads}, {args.repeats} interleaved reruns "
        "per page, AppTest in one process. `net` = page median - empty-script median (AppTest's own overhead "
        "removed). Target: rerun <= 150 ms, bytes <= 2 MB.",
        "",
        "| page | rerun median (ms) | net of empty (ms) | x empty | bytes per rerun | within target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for n in names:
        b = statistics.median(sizes[n])
        net = med[n] - med["empty"]
        ok = "yes" if net <= TARGET_MS and b <= TARGET_BYTES else "**no**"
        if n in ("empty", "sidebar"):
            ok = "(reference)"
        lines.append(f"| {n} | {med[n]:.0f} | {net:.0f} | {med[n] / med['empty']:.1f} | {b / 1024:,.0f} KiB | {ok} |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "bench_pages.md"
    previous = out.read_text() if out.exists() else ""
    marker = "\n## Earlier runs\n"
    history = previous.split(marker, 1)[1] if marker in previous else ""
    last = previous.split(marker, 1)[0].strip()
    out.write_text(text + marker + ("\n" + last + "\n" if last else "") + history)


if __name__ == "__main__":
    main()
