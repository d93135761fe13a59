"""Compare side by side vs the single view: whole page, cold, time and server memory, same server, same run.

One ``streamlit run`` (``OMP_NUM_THREADS=1``); one simulated student per view (bench/loadsim.py) opens a page at the
defaults with a seed new to the server, so every view builds its model(s) and computes every chart:

    single   the page's single view (seed s)
    compare  the same page comparing: A the single view's settings at seed s, B the same with 8 heads (``compare=a``
             and ``b.cfg.num_attention_heads=8`` in the link, as the share link writes it), both sides new

Kinds and pages interleaved, the order rotating per round. Reported per page: the median seconds from request to
script finished and compare / single (the issue's goal: about 2x at most, each side computed as a single view
is), and the server's RSS growth per view (MiB, the median of the differences before -> after each view).

Usage: ``python bench/bench_compare.py [--rounds 3] [--pages attention norms]`` -> bench/results/bench_compare.md (the latest run)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from common import report  # noqa: E402  (first: puts the project root on sys.path)

from bench.loadsim import Server, Student  # noqa: E402

KINDS = ("single", "compare")


async def _view(port: int, page: str, query: dict) -> float:
    async with Student(port) as s:
        v = await s.run(query, page, timeout=900)
    assert v.finished and not v.exceptions and v.charts > 0, (page, v.exceptions, v.alerts)
    return v.seconds


def _query(kind: str, seed: int) -> dict:
    q = {"ui.lang": "English", "cfg.seed": seed}
    if kind == "compare":
        q.update({"compare": "a", "b.cfg.seed": seed, "b.cfg.num_attention_heads": 8, "b.cfg.num_key_value_heads": 8})
    return q


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pages", nargs="+", default=["attention", "norms"])
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    cases = [(p, k) for p in args.pages for k in KINDS]
    secs: dict[tuple, list[float]] = {c: [] for c in cases}
    grew: dict[tuple, list[float]] = {c: [] for c in cases}
    server = Server(env={"OMP_NUM_THREADS": "1"})
    try:
        for page in args.pages:  # imports and first-use costs of each page and of comparing: not timed
            for kind in KINDS:
                asyncio.run(_view(server.port, page, _query(kind, 999)))
        seed = 1000
        for r in range(args.rounds):
            for page, kind in cases[r % len(cases):] + cases[: r % len(cases)]:
                seed += 1
                before = server.rss()
                secs[(page, kind)].append(asyncio.run(_view(server.port, page, _query(kind, seed))))
                grew[(page, kind)].append((server.rss() - before) / 2**20)
                print(page, kind, f"{secs[(page, kind)][-1]:.2f} s", f"+{grew[(page, kind)][-1]:.1f} MiB", flush=True)
        peak = server.peak_rss / 2**20
    finally:
        server.close()
    lines = ["", f"## Compare vs single view, whole page, cold ({time.strftime('%Y-%m-%d %H:%M')})", "",
             f"`python bench/bench_compare.py --rounds {args.rounds}`: one server, `OMP_NUM_THREADS=1`, kinds and pages "
             f"interleaved, each view a new seed; B = A with 8 heads. Load average {load0:.1f} at the start, "
             f"{os.getloadavg()[0]:.1f} at the end; server peak RSS {peak:,.0f} MiB.", "",
             "| page | single: median s | compare: median s | compare / single | RSS growth per view, single -> compare (MiB) |",
             "|---|---:|---:|---:|---:|"]
    for page in args.pages:
        one, two = (statistics.median(secs[(page, k)]) for k in KINDS)
        g1, g2 = (statistics.median(grew[(page, k)]) for k in KINDS)
        lines.append(f"| {page} | {one:.2f} | {two:.2f} | **{two / one:.2f}×** | {g1:.1f} -> {g2:.1f} |")
    report("bench_compare", "# bench_compare\n" + "\n".join(lines) + "\n", write=not args.no_write)


if __name__ == "__main__":
    main()
