"""A class on SmolLM2's pages: N students on one server, as ratios against one student alone in the same run.

Usage: ``python bench/bench_class.py [--students 10] [--pages pre-vs-post lens generate] [--code-root DIR]
[--omp-threads 1] [--no-write]``

One ``streamlit run`` server on loopback (started with ``OMP_NUM_THREADS=1``, as the README says; ``--code-root``
runs another checkout's app, to measure the code before a change in the same way). Simulated students
(``bench/loadsim.py``) open a page's link in English, then pick "pretrained checkpoint" in the sidebar (SmolLM2,
listed first); what is timed is that SmolLM2 view (request -> script finished). On the Generate page what is
timed is the "Next token" click after it. Every phase uses input texts new to the server (English sentences of
about 40 SmolLM2 tokens), so each phase does the same work: the trace, the page's tables, its figures. A first
student opens the Overview on SmolLM2 before anything is timed (the load and the imports are not the question).

Per page, three phases:

* **alone**: one student, then (the reference) each ratio below divides by this time;
* **same view**: ``--students`` students open the same link (same text) at once: a class that opened one link.
  Reported: the median and the slowest student's time / alone (the issue's target: at most about 3x);
* **different inputs**: ``--students`` students, each with their own text, arriving 0.2 s apart. Reported: the
  first arrival's time / alone, the median and the slowest / alone, and the rank correlation between the order
  of arrival and the order of finishing (1: served in order of arrival; about 0: all finished together).

Also reported: the server's RSS before the class (after the untimed first view), its peak, 5 s after every tab
closed, and after the sessions ended: Streamlit keeps a closed tab's session (its ``st.session_state``) for two
minutes in case it reconnects and drops it only when its session store is next used, so the bench waits
``--linger`` seconds (default 130), opens one more small view (the random-init Overview) and reads the RSS 3 s
later; and the load average (1 min) at the start and the end of each page. Writes ``bench/results/bench_class.md`` (one table per
``--code-root``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import time
from pathlib import Path

try:
    import common  # noqa: F401  (run as a script: puts the project root on sys.path)
except ModuleNotFoundError:
    pass

from bench.loadsim import ROOT, Server, Student  # noqa: E402

SOURCE_LABEL = "Model"  # the sidebar radio (ui/strings/common.py, English)
CHECKPOINT = 2  # its third option: "pretrained checkpoint" (SmolLM2 listed first)
NEXT = "Next token"
SUBJECTS = ["river", "teacher", "mountain", "library", "garden", "engine", "market", "winter", "village", "ocean",
            "student", "bridge", "forest", "kitchen", "harbor", "museum", "station", "theater", "island", "castle",
            "desert", "valley", "orchard", "factory", "temple", "meadow", "canyon", "lantern", "glacier", "prairie"]
_counter = [0]


def fresh_text() -> str:
    """An English sentence not sent before in this run (about 40 SmolLM2 tokens)."""
    _counter[0] += 1
    k = _counter[0]
    a, b = SUBJECTS[k % len(SUBJECTS)], SUBJECTS[(7 * k + 3) % len(SUBJECTS)]
    return (f"Lesson {k}: the {a} near the old {b} was quiet in the morning, and the children walked along it "
            f"slowly while their teacher told them why the {a} mattered to everyone who lived there.")


async def view(port: int, page: str, text: str, generate: bool, delay: float = 0.0) -> dict:
    """One student: open the link, pick SmolLM2 (timed), and on Generate press Next token (timed instead)."""
    await asyncio.sleep(delay)
    arrived = time.perf_counter()
    try:
        async with Student(port) as s:
            first = await s.run({"ui.lang": "English", "input.text": text}, page, timeout=900)
            v, radio = await s.pick(SOURCE_LABEL, CHECKPOINT, first, timeout=900)
            if generate:
                v = await s.click(NEXT, v, timeout=900, keep=[radio])
        ok = v.finished and not v.exceptions and (v.charts > 0)
        return {"arrived": arrived, "seconds": v.seconds, "done": time.perf_counter(), "ok": ok,
                "exceptions": v.exceptions}
    except Exception as err:  # a timeout or a dropped connection: a failed view, reported
        return {"arrived": arrived, "seconds": float("nan"), "done": time.perf_counter(), "ok": False,
                "exceptions": [f"client: {type(err).__name__}: {err}"]}


async def small_view(port: int) -> None:
    async with Student(port) as s:
        await s.run({"ui.lang": "English"}, "", timeout=300)


def spearman(xs: list[float], ys: list[float]) -> float:
    """Rank correlation of two equally long lists (no ties expected)."""
    def ranks(v):
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0] * len(v)
        for rank, i in enumerate(order):
            r[i] = rank
        return r

    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    if n < 2:
        return float("nan")
    d2 = sum((a - b) ** 2 for a, b in zip(rx, ry))
    return 1 - 6 * d2 / (n * (n * n - 1))


async def page_phases(port: int, page: str, n: int) -> dict:
    generate = page == "generate"
    alone = await view(port, page, fresh_text(), generate)
    text = fresh_text()
    same = await asyncio.gather(*[view(port, page, text, generate) for _ in range(n)])
    diff = await asyncio.gather(*[view(port, page, fresh_text(), generate, delay=0.2 * i) for i in range(n)])
    return {"alone": alone, "same": list(same), "diff": list(diff)}


def run_class(root: Path, pages: list[str], n: int, omp: int, env: dict | None = None, linger: float = 130) -> dict:
    server = Server(env={"OMP_NUM_THREADS": str(omp), **(env or {})}, root=root)
    out = {"pages": {}, "loads": []}
    try:
        asyncio.run(view(server.port, "", fresh_text(), False))  # the load, the imports: not timed
        out["rss_before"] = server.rss()
        for page in pages:
            load0 = os.getloadavg()[0]
            out["pages"][page] = asyncio.run(page_phases(server.port, page, n))
            out["pages"][page]["load"] = (load0, os.getloadavg()[0])
            print(page, summarise(out["pages"][page]), flush=True)
        time.sleep(5.0)
        out["rss_after"] = server.rss()
        out["peak_rss"] = server.peak_rss
        time.sleep(max(0.0, linger - 5.0))
        asyncio.run(small_view(server.port))  # the session store is used: expired sessions are dropped
        time.sleep(3.0)
        out["rss_ended"] = server.rss()
    finally:
        server.close()
    return out


def summarise(r: dict) -> dict:
    alone = r["alone"]["seconds"]
    same = [v["seconds"] for v in r["same"]]
    diff = sorted(r["diff"], key=lambda v: v["arrived"])
    finish = [v["done"] for v in diff]
    return {
        "alone": alone,
        "same_median": statistics.median(same) / alone, "same_max": max(same) / alone,
        "diff_first": diff[0]["seconds"] / alone,
        "diff_median": statistics.median(v["seconds"] for v in diff) / alone,
        "diff_max": max(v["seconds"] for v in diff) / alone,
        "order": spearman([v["arrived"] for v in diff], finish),
        "ok": sum(v["ok"] for v in [r["alone"], *r["same"], *r["diff"]]),
        "views": 1 + len(r["same"]) + len(r["diff"]),
        "errors": sorted({e for v in [r["alone"], *r["same"], *r["diff"]] for e in v["exceptions"]})[:3],
    }


def table(root: Path, result: dict, n: int) -> str:
    rev = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h"], capture_output=True, text=True)
    lines = [f"Code `{rev.stdout.strip()}` ({root.name}); server RSS before the class "
             f"{result['rss_before'] / 2**20:,.0f} MiB, peak {result['peak_rss'] / 2**20:,.0f} MiB, 5 s after every "
             f"tab closed {result['rss_after'] / 2**20:,.0f} MiB ({result['rss_after'] / result['rss_before']:.2f}× "
             f"before), after the sessions ended {result['rss_ended'] / 2**20:,.0f} MiB (after / before "
             f"**{result['rss_ended'] / result['rss_before']:.2f}×**).", "",
             f"| page (SmolLM2) | alone s | {n} on the same view: median / slowest ÷ alone | {n} different inputs: "
             f"first arrival / median / slowest ÷ alone | arrival → finish rank correlation | views ok | "
             "load average start → end |", "|---|---|---|---|---|---|---|"]
    for page, r in result["pages"].items():
        s = summarise(r)
        what = "Next token click" if page == "generate" else "view"
        lines.append(f"| {page} ({what}) | {s['alone']:.2f} | **{s['same_median']:.1f}×** / {s['same_max']:.1f}× | "
                     f"{s['diff_first']:.1f}× / {s['diff_median']:.1f}× / {s['diff_max']:.1f}× | {s['order']:.2f} | "
                     f"{s['ok']} / {s['views']} | {r['load'][0]:.1f} → {r['load'][1]:.1f} |")
        if s["errors"]:
            lines.append(f"| ↳ errors | {'; '.join(s['errors'])} | | | | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--pages", nargs="+", default=["pre-vs-post", "lens", "generate"])
    parser.add_argument("--code-root", action="append", type=Path)
    parser.add_argument("--omp-threads", type=int, default=1)
    parser.add_argument("--linger", type=float, default=130.0, help="s after the tabs closed before the last RSS")
    parser.add_argument("--env", nargs="*", default=[], help="KEY=VALUE settings for the server's environment")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    env = dict(kv.split("=", 1) for kv in args.env)
    from common import machine_line, report

    parts = []
    for root in args.code_root or [ROOT]:
        result = run_class(root.resolve(), args.pages, args.students, args.omp_threads, env, args.linger)
        parts.append(table(root.resolve(), result, args.students))
        print(parts[-1], flush=True)
    text = (f"# A class on SmolLM2's pages (bench/bench_class.py)\n\n{machine_line()}\n\n"
            f"`python bench/bench_class.py --students {args.students} --pages {' '.join(args.pages)}"
            f"{' --env ' + ' '.join(args.env) if args.env else ''}`; one server per "
            f"code, `OMP_NUM_THREADS={args.omp_threads}`; every phase on texts new to the server; ratios against the "
            f"alone time of the same page in the same run.\n\n" + "\n\n".join(parts) + "\n")
    report("bench_class", text, write=not args.no_write)


if __name__ == "__main__":
    main()
