"""Load test of one `streamlit run` server on loopback: a class clicking through pages while some train.

Usage: ``python bench/bench_load.py [--students 30] [--views 4] [--trainers 4] [--omp-threads 1] [--no-write]``

``--students`` simulated students (websocket clients speaking Streamlit's protocol, ``bench/loadsim.py``) each
open ``--views`` pages in turn (overview, norms, Pre vs Post, attention, loss, next token) with their own small
config (hidden 16-64, 1-4 layers, 2 or 4 heads, vocabulary 512 / 1000 / 4000, own seed), 0.5-2 s of reading
between clicks. Each view opens the page's full link (every control in the URL) in a fresh session, as a shared
link does; switching pages inside one session is the browser tests' concern. Meanwhile ``--trainers`` students press Start on the Training lab (default run) and keep its
live panel updating, and one student asks for the slider maxima. Reported:

* page latency (request -> script finished) p50 / p95 / max of the students' page views, and how many finished
  with at least one chart and no exception;
* whether the maxima request was refused with its cost (and how long the refusal took);
* each trainer's place in line when it started and the step it reached when the students were done;
* the server's idle and peak RSS, and its CPU use in the 5 s after every tab closed (the runs must stop).

Writes ``bench/results/bench_load.md``. Bounded: every wait has a timeout; nothing leaves the loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

try:
    import common  # noqa: F401  (run as a script: puts the project root on sys.path)
except ModuleNotFoundError:  # imported by tests/bench/test_load.py, where the root is already on sys.path
    pass

from bench.loadsim import MAXIMA, Server, Student, follow_run, queued, step_of  # noqa: E402

PAGES = ["", "norms", "pre-vs-post", "attention", "loss", "next-token"]
TEXT = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"


def student_config(i: int) -> dict:
    rng = random.Random(i)
    heads = rng.choice([2, 4])
    return {"ui.lang": rng.choice(["English", "中文"]), "cfg.hidden_size": rng.choice([16, 32, 64]),
            "cfg.num_hidden_layers": rng.randint(1, 4), "cfg.num_attention_heads": heads,
            "cfg.num_key_value_heads": heads, "cfg.vocab_size": rng.choice([512, 1000, 4000]),
            "cfg.seed": 100 + i, "input.text": TEXT}


async def student(port: int, i: int, views: int, out: list) -> None:
    rng = random.Random(1000 + i)
    for k in range(views):
        page = PAGES[(i + k) % len(PAGES)]
        async with Student(port) as s:  # each view opens the page's link in a fresh tab (see the module docstring)
            try:
                v = await s.run(student_config(i), page, timeout=600)
                out.append({"student": i, "page": page or "overview", "seconds": v.seconds, "charts": v.charts,
                            "exceptions": v.exceptions, "finished": v.finished})
            except Exception as err:  # a timeout or a dropped connection is a failed view, reported
                out.append({"student": i, "page": page or "overview", "seconds": float("nan"), "charts": 0,
                            "exceptions": [f"client: {type(err).__name__}: {err}"], "finished": False})
            await asyncio.sleep(rng.uniform(0.5, 2.0))


async def trainer(port: int, i: int, done: asyncio.Event, out: list, steps: int | None = None,
                  linger: float = 0.0) -> None:
    """Press Start and follow the live panel until the run ends, or ``linger`` s after the students are done."""
    query = {"ui.lang": "English", "input.text": TEXT, **({"train.steps": steps} if steps else {})}
    record = {"trainer": i, "queued": False, "step": 0, "result": None, "exceptions": [], "finished_run": False}
    try:
        async with Student(port) as s:
            page = await s.run(query, "train", timeout=600)
            view = await s.click("▶ Start", page, timeout=600)
            record.update(queued=queued(view), step=step_of(view) or 0, exceptions=page.exceptions + view.exceptions)
            await follow_run(s, record, lambda: not done.is_set() or time.perf_counter() < done.at + linger)
    except Exception as err:  # a timeout or a dropped connection: reported, the other clients go on
        record["exceptions"].append(f"client: {type(err).__name__}: {err}")
    out.append(record)


async def maxima(port: int, out: dict) -> None:
    async with Student(port) as s:
        v = await s.run({"ui.lang": "English", **MAXIMA}, "", timeout=600)
        out.update(seconds=v.seconds, exceptions=v.exceptions,
                   refusal=next((a for a in v.alerts if "Not started" in a), None))


async def scenario(port: int, students: int, views: int, trainers: int, train_steps: int | None = None,
                   linger: float = 0.0) -> dict:
    done = asyncio.Event()
    done.at = float("inf")
    views_out, train_out, max_out = [], [], {}
    train_tasks = [asyncio.create_task(trainer(port, i, done, train_out, train_steps, linger)) for i in range(trainers)]
    await asyncio.sleep(2.0)  # the runs are started (or queued) before the class arrives
    t0 = time.perf_counter()
    await asyncio.gather(maxima(port, max_out), *[student(port, i, views, views_out) for i in range(students)])
    wall = time.perf_counter() - t0
    done.at = time.perf_counter()
    done.set()
    await asyncio.gather(*train_tasks)
    return {"views": views_out, "trainers": train_out, "maxima": max_out, "wall": wall}


def summary(result: dict, server: Server, idle_cpu: float) -> dict:
    secs = sorted(v["seconds"] for v in result["views"] if v["finished"])
    q = statistics.quantiles(secs, n=20) if len(secs) >= 2 else secs * 19
    return {
        "views": len(result["views"]), "ok": sum(v["finished"] and not v["exceptions"] and v["charts"] > 0
                                                 for v in result["views"]),
        "exceptions": [e for v in result["views"] for e in v["exceptions"]]
        + [e for t in result["trainers"] for e in t["exceptions"]] + result["maxima"].get("exceptions", []),
        "p50": statistics.median(secs) if secs else float("nan"), "p95": q[18] if secs else float("nan"),
        "max": max(secs) if secs else float("nan"), "wall": result["wall"],
        "maxima_refused": result["maxima"].get("refusal"), "maxima_s": result["maxima"].get("seconds"),
        "trainers": result["trainers"], "idle_mb": server.idle_rss / 2**20, "peak_mb": server.peak_rss / 2**20,
        "cpu_after_close": idle_cpu,
    }


def run(students: int, views: int, trainers: int, env: dict | None = None, train_steps: int | None = None,
        linger: float = 0.0) -> dict:
    """Start a server, play the scenario, close every tab, measure the CPU left, stop the server.

    ``linger``: how long the trainers keep following their runs after the students are done (0: they close
    their tabs at once, mid-run)."""
    server = Server(env)
    try:
        result = asyncio.run(scenario(server.port, students, views, trainers, train_steps, linger))
        time.sleep(5.0)  # every tab is closed: the runs should stop within a second or two
        c0 = server.cpu_seconds()
        time.sleep(5.0)
        idle_cpu = (server.cpu_seconds() - c0) / 5.0
        return summary(result, server, idle_cpu)
    finally:
        server.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--views", type=int, default=4)
    ap.add_argument("--trainers", type=int, default=4)
    ap.add_argument("--omp-threads", default="1",
                    help="OMP_NUM_THREADS of the server, as in the README's run command ('' leaves it unset)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    import os

    from bench.common import machine_line, report

    load0 = os.getloadavg()[0]
    s = run(args.students, args.views, args.trainers, env={"OMP_NUM_THREADS": args.omp_threads} if args.omp_threads else {})
    trainers = "; ".join(f"#{t['trainer']}: {'queued, ' if t['queued'] else ''}step {t['step']}"
                         + (" (finished)" if t["finished_run"] else "") for t in sorted(s["trainers"], key=lambda t: t["trainer"]))
    text = (f"# Load test: {args.students} students x {args.views} page views, {args.trainers} training, 1 at the maxima\n\n"
            f"{machine_line()}; load average {load0:.0f} at the start and {os.getloadavg()[0]:.0f} at the end (other users "
            "of the machine)\n\n"
            f"`python bench/bench_load.py --students {args.students} --views {args.views} --trainers {args.trainers} "
            f"--omp-threads '{args.omp_threads}'` (server: OMP_NUM_THREADS={args.omp_threads or 'unset'}, "
            f"EXPLORER_TORCH_THREADS={os.environ.get('EXPLORER_TORCH_THREADS', 'default')})\n\n"
            "| page views ok / all | exceptions | p50 s | p95 s | max s | maxima refused (s) | trainers | idle RSS MB | "
            "peak RSS MB | server CPU after every tab closed |\n|---|---|---|---|---|---|---|---|---|---|\n"
            f"| {s['ok']} / {s['views']} | {len(s['exceptions'])} | {s['p50']:.1f} | {s['p95']:.1f} | {s['max']:.1f} "
            f"| {'yes' if s['maxima_refused'] else 'NO'} ({s['maxima_s'] or float('nan'):.1f}) | {trainers} "
            f"| {s['idle_mb']:.0f} | {s['peak_mb']:.0f} | {100 * s['cpu_after_close']:.0f} % of a core |\n\n"
            f"Maxima message: {s['maxima_refused']}\n\nExceptions: {s['exceptions'][:5]}\n")
    report("bench_load", text, write=not args.no_write)


if __name__ == "__main__":
    main()
