"""Load test of one `streamlit run` server on loopback: a class clicking through pages while some train.

Usage: ``python bench/bench_load.py [--students 30] [--views 4] [--trainers 4] [--omp-threads 1] [--phases isolation herd]
[--job-modes processes threads] [--no-write]``

Two phases, each on its own freshly started server:

**isolation** (the issue's done-criterion, as a ratio measured in one run): a probe student opens the six small-config
pages (overview, norms, Pre vs Post, attention, loss, next token) in turn, (a) on an otherwise idle server and (b)
while ``--trainers`` students train and one asks for the slider maxima (no herd). Every probe view uses a seed
not seen before on that server, so both passes do the same work (build the model, trace, draw); a first pass
with yet another seed warms the imports and is not counted, and a last pass (a') once every trainer's tab closed
makes "alone" the mean of (a) and (a'), so a change in the machine's other load hits both sides. Reported: each
page's latency alone and under the heavy actions, the median ratio (b)/(a), the worst (b), how long the maxima
refusal took, and the server's own CPU use while only the trainers' tabs were open. ``--job-modes threads``
repeats the phase with the runs in the server's threads (``EXPLORER_JOB_PROCESSES=0``, the old way).

**herd**:

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
* the server's idle and peak RSS, and its CPU use in the 5 s after every tab closed (the runs must stop);
* throughput: finished page views per CPU-second the server used while the class clicked (its training
  processes included), and per wall-clock second.

RSS and CPU count the server process and every process it started (training runs in their own processes).

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


PROBE = {"ui.lang": "English", "cfg.hidden_size": 64, "cfg.num_hidden_layers": 2, "cfg.num_attention_heads": 4,
         "cfg.num_key_value_heads": 4, "cfg.vocab_size": 1000, "input.text": TEXT}  # the sidebar's size of model


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
    out.append(record)  # filled in while the run goes on (the isolation phase watches the steps)
    try:
        async with Student(port) as s:
            page = await s.run(query, "train", timeout=600)
            view = await s.click("▶ Start", page, timeout=600)
            record.update(queued=queued(view), step=step_of(view) or 0, exceptions=page.exceptions + view.exceptions)
            await follow_run(s, record, lambda: not done.is_set() or time.perf_counter() < done.at + linger)
    except Exception as err:  # a timeout or a dropped connection: reported, the other clients go on
        record["exceptions"].append(f"client: {type(err).__name__}: {err}")


async def maxima(port: int, out: dict) -> None:
    async with Student(port) as s:
        v = await s.run({"ui.lang": "English", **MAXIMA}, "", timeout=600)
        out.update(seconds=v.seconds, exceptions=v.exceptions,
                   refusal=next((a for a in v.alerts if "Not started" in a), None))


async def scenario(port: int, students: int, views: int, trainers: int, train_steps: int | None = None,
                   linger: float = 0.0, cpu=lambda: 0.0) -> dict:
    """The herd: ``cpu()`` reads the server's CPU-seconds (for the throughput)."""
    done = asyncio.Event()
    done.at = float("inf")
    views_out, train_out, max_out = [], [], {}
    train_tasks = [asyncio.create_task(trainer(port, i, done, train_out, train_steps, linger)) for i in range(trainers)]
    await asyncio.sleep(2.0)  # the runs are started (or queued) before the class arrives
    t0, c0 = time.perf_counter(), cpu()
    await asyncio.gather(maxima(port, max_out), *[student(port, i, views, views_out) for i in range(students)])
    wall, cpu_s = time.perf_counter() - t0, cpu() - c0
    done.at = time.perf_counter()
    done.set()
    await asyncio.gather(*train_tasks)
    return {"views": views_out, "trainers": train_out, "maxima": max_out, "wall": wall, "cpu": cpu_s}


async def probe(port: int, seed: int) -> list[dict]:
    """One student opens the six small-config pages in turn, each in a fresh tab, on a seed new to the server."""
    out = []
    for page in PAGES:
        async with Student(port) as s:
            v = await s.run({**PROBE, "cfg.seed": seed}, page, timeout=600)
        out.append({"page": page or "overview", "seconds": v.seconds if v.finished else float("nan"),
                    "charts": v.charts, "exceptions": v.exceptions})
    return out


async def isolation_scenario(port: int, trainers: int, server_cpu) -> dict:
    """(a) the probe alone; (b) the probe while ``trainers`` train and one asks for the maxima (see the docstring);
    (a') the probe alone again once every trainer's tab closed (alone = the mean of (a) and (a'), so a change in
    the machine's other load during the run affects both sides alike). ``server_cpu()``: the server process's
    own CPU-seconds (its training processes left out)."""
    await probe(port, 7000)  # warm-up: imports and first compiles, not counted
    alone = await probe(port, 7001)
    done = asyncio.Event()
    done.at = float("inf")
    train_out, max_out = [], {}
    tasks = [asyncio.create_task(trainer(port, i, done, train_out)) for i in range(trainers)]
    deadline = time.perf_counter() + 300
    while time.perf_counter() < deadline and not any(t["step"] >= 1 for t in train_out):
        await asyncio.sleep(0.5)  # the heavy work is under way (a run shows its first step) before the probe starts
    c0, t0 = server_cpu(), time.perf_counter()
    await asyncio.sleep(5.0)
    tabs_cpu = (server_cpu() - c0) / (time.perf_counter() - t0)  # what the trainers' live panels cost the server
    busy, _ = await asyncio.gather(probe(port, 7002), maxima(port, max_out))
    steps_seen = [t["step"] for t in train_out]
    done.at = time.perf_counter()
    done.set()
    await asyncio.gather(*tasks)
    await asyncio.sleep(3.0)  # the runs stop once their tabs are gone
    again = await probe(port, 7003)
    alone = [{**a, "seconds": (a["seconds"] + b["seconds"]) / 2, "before": a["seconds"], "after": b["seconds"]}
             for a, b in zip(alone, again)]
    return {"alone": alone, "busy": busy, "maxima": max_out, "trainers": train_out, "steps_during_probe": steps_seen,
            "tabs_cpu": tabs_cpu}


def isolation(trainers: int, env: dict | None = None) -> dict:
    """The isolation phase on a fresh server; returns the probe's views, the maxima and the trainers."""
    server = Server(env)
    try:
        r = asyncio.run(isolation_scenario(server.port, trainers, lambda: server.cpu_seconds(children=False)))
        r["peak_mb"], r["peak_tree_mb"] = server.peak_rss / 2**20, server.peak_tree / 2**20
        return r
    finally:
        server.close()


def isolation_table(r: dict) -> str:
    rows = []
    for a, b in zip(r["alone"], r["busy"]):
        rows.append(f"| {a['page']} | {a['seconds']:.2f} ({a['before']:.2f}, {a['after']:.2f}) | {b['seconds']:.2f} "
                    f"| {b['seconds'] - a['seconds']:+.2f} | {b['seconds'] / a['seconds']:.1f}x |")
    ratios = [b["seconds"] / a["seconds"] for a, b in zip(r["alone"], r["busy"])]
    added = max(b["seconds"] - a["seconds"] for a, b in zip(r["alone"], r["busy"]))
    worst = max(b["seconds"] for b in r["busy"])
    m = r["maxima"]
    errors = [e for v in r["alone"] + r["busy"] for e in v["exceptions"]] + m.get("exceptions", []) + [
        e for t in r["trainers"] for e in t["exceptions"]]
    return (f"| page (probe student, small config) | alone s (before, after) | while {len(r['trainers'])} train + 1 asks for the maxima s "
            "| added s | ratio |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
            f"Median ratio **{statistics.median(ratios):.1f}x**, most time the heavy actions added to one page view "
            f"**{added:+.1f} s**, worst page under the heavy actions **{worst:.1f} s**; "
            f"the maxima request was {'refused' if m.get('refusal') else 'NOT refused'} after "
            f"{m.get('seconds') or float('nan'):.1f} s; trainers' steps when the probe was done: "
            f"{', '.join(str(s) for s in r['steps_during_probe'])}; the trainers' open tabs alone kept the server process "
            f"{100 * r['tabs_cpu']:.0f} % of a core busy; peak RSS of the server process {r['peak_mb']:.0f} MB, of the "
            f"server and its child processes together {r['peak_tree_mb']:.0f} MB (PSS); exceptions: {errors[:3] or 'none'}\n")


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
        "peak_tree_mb": server.peak_tree / 2**20,
        "cpu_after_close": idle_cpu, "cpu": result["cpu"],
        "views_per_cpu_s": len(secs) / result["cpu"] if result.get("cpu") else float("nan"),
        "views_per_s": len(secs) / result["wall"],
    }


def run(students: int, views: int, trainers: int, env: dict | None = None, train_steps: int | None = None,
        linger: float = 0.0) -> dict:
    """Start a server, play the scenario, close every tab, measure the CPU left, stop the server.

    ``linger``: how long the trainers keep following their runs after the students are done (0: they close
    their tabs at once, mid-run)."""
    server = Server(env)
    try:
        result = asyncio.run(scenario(server.port, students, views, trainers, train_steps, linger, server.cpu_seconds))
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
    ap.add_argument("--phases", nargs="+", choices=["isolation", "herd"], default=["isolation", "herd"])
    ap.add_argument("--job-modes", nargs="+", choices=["processes", "threads"], default=["processes"],
                    help="isolation phase: run it with training in processes (default) and/or in the server's threads")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    import os

    from bench.common import machine_line, report

    env = {"OMP_NUM_THREADS": args.omp_threads} if args.omp_threads else {}
    load0 = os.getloadavg()[0]
    text = (f"# Load test: {args.trainers} training and 1 at the maxima, beside 1 probe student (isolation) and "
            f"beside {args.students} students x {args.views} page views (herd)\n\n"
            f"{machine_line()}; load average {load0:.0f} at the start (other users of the machine)\n\n"
            f"`python bench/bench_load.py --students {args.students} --views {args.views} --trainers {args.trainers} "
            f"--omp-threads '{args.omp_threads}' --phases {' '.join(args.phases)} --job-modes {' '.join(args.job_modes)}` "
            "(server: "
            f"OMP_NUM_THREADS={args.omp_threads or 'unset'}, "
            f"EXPLORER_TORCH_THREADS={os.environ.get('EXPLORER_TORCH_THREADS', 'default')}, "
            f"EXPLORER_MAX_HEAVY_JOBS={os.environ.get('EXPLORER_MAX_HEAVY_JOBS', 'default')})\n\n")
    for mode in args.job_modes if "isolation" in args.phases else []:
        how = {"processes": "runs in their own processes (the default)",
               "threads": "runs in threads of the server process, as before (EXPLORER_JOB_PROCESSES=0)"}[mode]
        text += (f"## Isolation, {how}: one probe student, alone and beside the heavy actions\n\n"
                 + isolation_table(isolation(args.trainers, {**env, "EXPLORER_JOB_PROCESSES": "0" if mode == "threads" else "1"}))
                 + f"\nLoad average now: {os.getloadavg()[0]:.0f}\n\n")
        print(text, flush=True)
    if "herd" in args.phases:
        s = run(args.students, args.views, args.trainers, env=env)
        trainers = "; ".join(f"#{t['trainer']}: {'queued, ' if t['queued'] else ''}step {t['step']}"
                             + (" (finished)" if t["finished_run"] else "")
                             for t in sorted(s["trainers"], key=lambda t: t["trainer"]))
        text += (f"## Herd: {args.students} students arriving together\n\n"
                 "| page views ok / all | exceptions | p50 s | p95 s | max s | views per CPU-second (per wall s) "
                 "| maxima refused (s) | trainers | idle RSS MB | peak RSS MB (server; with its children, PSS) "
                 "| server CPU after every tab closed |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|\n"
                 f"| {s['ok']} / {s['views']} | {len(s['exceptions'])} | {s['p50']:.1f} | {s['p95']:.1f} | {s['max']:.1f} "
                 f"| {s['views_per_cpu_s']:.2f} ({s['views_per_s']:.2f}) "
                 f"| {'yes' if s['maxima_refused'] else 'NO'} ({s['maxima_s'] or float('nan'):.1f}) | {trainers} "
                 f"| {s['idle_mb']:.0f} | {s['peak_mb']:.0f}; {s['peak_tree_mb']:.0f} | {100 * s['cpu_after_close']:.0f} % of a core |\n\n"
                 f"Maxima message: {s['maxima_refused']}\n\nExceptions: {s['exceptions'][:5]}\n\n")
    text += f"Load average at the end: {os.getloadavg()[0]:.0f}\n"
    report("bench_load", text, write=not args.no_write)


if __name__ == "__main__":
    main()
