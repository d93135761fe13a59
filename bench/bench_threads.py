"""Concurrent training runs on one server process: torch threads per run, and the per-server limit.

Usage: ``python bench/bench_threads.py [--steps 300] [--counts 1 2 4 8] [--threads 1 2] [--limit 2]
[--two-thread-counts 1 4] [--no-write]``

What a class does when several students press Start on the Training lab: K default runs (the sidebar's default
model, ``TrainConfig()``: 300 steps x 16 x 64 tokens, on the Tang poems) started at the same moment in one
process, through the app's own job code (``server.jobs.start_training``, each run in its own thread).

* **Threads per run**: every K in ``--counts`` with each of ``--threads`` torch threads per run, all K running at
  once (no limit): the wall time of each run (Start pressed -> finished; mean and slowest) and of the whole batch.
  Runs with more than one thread are limited to the K in ``--two-thread-counts`` (on a busy machine they are
  the slow ones).
* **The limit**: K = 4 and 8 through the app's line with ``--limit`` slots (default 2, the default on a 2-core
  server) and the app's default threads per run (``server.admission.torch_threads()``, or ``--limit-threads``): how long each student waits, the mean and slowest Start -> finished, and the
  batch's wall time.

Writes ``bench/results/bench_threads.md``. On a shared machine the absolute times move with the other load:
compare rows of one run, not across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from common import machine_line, markdown_table, report  # noqa: E402  (first: puts the project root on sys.path)

import torch  # noqa: E402

from engine import CausalLM, ModelConfig  # noqa: E402
from engine.tokenizer import load_corpus, train_bpe  # noqa: E402
from engine.train import TrainConfig  # noqa: E402
from server import admission, jobs  # noqa: E402
from ui.sidebar import DEFAULTS, MAX_TOKENS  # noqa: E402


def default_model() -> tuple[CausalLM, torch.Tensor]:
    """The sidebar's default model (seed 0) and the zh corpus encoded at its vocabulary size."""
    config = ModelConfig(vocab_size=DEFAULTS["cfg.vocab_size"], hidden_size=DEFAULTS["cfg.hidden_size"],
                         num_hidden_layers=DEFAULTS["cfg.num_hidden_layers"],
                         num_attention_heads=DEFAULTS["cfg.num_attention_heads"],
                         intermediate_size=DEFAULTS["cfg.intermediate_size"],
                         max_position_embeddings=MAX_TOKENS)
    torch.manual_seed(0)
    ids = torch.tensor(train_bpe(config.vocab_size).encode(load_corpus("zh")))
    return CausalLM(config), ids


def batch(model: CausalLM, ids: torch.Tensor, cfg: TrainConfig, k: int, limit: int, threads: int) -> dict:
    """Start ``k`` runs at once through a line of ``limit`` slots with ``threads`` torch threads per run."""
    os.environ[admission.ENV_THREADS] = str(threads)
    admission.reset(limit)
    t0 = time.perf_counter()
    runs = [jobs.start_training(model, ids, cfg, "zh", "bench") for _ in range(k)]
    for job in runs:
        job.wait()
    makespan = time.perf_counter() - t0
    errors = [j.error for j in runs if j.error]
    if errors:
        raise RuntimeError(errors[0])
    total = [j.finished - j.submitted for j in runs]
    waited = [j.started - j.submitted for j in runs]
    return {"k": k, "limit": limit, "threads": threads, "mean": statistics.mean(total), "max": max(total),
            "wait_mean": statistics.mean(waited), "wait_max": max(waited), "makespan": makespan,
            "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=TrainConfig().steps)
    ap.add_argument("--counts", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads per run, no-limit rows")
    ap.add_argument("--two-thread-counts", type=int, nargs="+", default=None,
                    help="the K run with more than one thread (default: every K in --counts)")
    ap.add_argument("--limit", type=int, default=2)
    ap.add_argument("--limit-threads", type=int, default=0, help="threads per run behind the limit (0: the app's default)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    default = TrainConfig()  # the page evaluates every steps // 10 = 30 steps on the default run: keep that mix
    cfg = TrainConfig(steps=args.steps, warmup_steps=min(default.warmup_steps, args.steps - 1),
                      eval_every=default.steps // 10)
    model, ids = default_model()

    rows = []
    for k in args.counts:
        for threads in args.threads:
            if threads > 1 and args.two_thread_counts is not None and k not in args.two_thread_counts:
                continue
            r = batch(model, ids, cfg, k, limit=k, threads=threads)
            rows.append(r)
            print(r, flush=True)
    for k in [c for c in args.counts if c > args.limit]:
        r = batch(model, ids, cfg, k, limit=args.limit, threads=args.limit_threads or admission.torch_threads())
        rows.append(r)
        print(r, flush=True)

    table = markdown_table(
        ["runs started together", "at most at once", "torch threads per run", "Start -> finished, mean s",
         "slowest s", "waited in line, mean / max s", "all done s", "load average after"],
        [[str(r["k"]), "no limit" if r["limit"] >= r["k"] else str(r["limit"]), str(r["threads"]),
          f"{r['mean']:.1f}", f"{r['max']:.1f}", f"{r['wait_mean']:.1f} / {r['wait_max']:.1f}",
          f"{r['makespan']:.1f}", f"{r['load']:.0f}"] for r in rows])
    text = (f"# Concurrent training runs\n\n{machine_line()}\n\n`python bench/bench_threads.py --steps {args.steps} "
            f"--counts {' '.join(map(str, args.counts))} --threads {' '.join(map(str, args.threads))} "
            + (f"--two-thread-counts {' '.join(map(str, args.two_thread_counts))} " if args.two_thread_counts else "")
            + f"--limit {args.limit}`, load average {os.getloadavg()[0]:.0f} "
            f"from other users of the machine at the end; default model, "
            f"{cfg.steps} steps x {cfg.batch_size} x {cfg.seq_len} tokens per run.\n\n{table}\n")
    report("bench_threads", text, write=not args.no_write)


if __name__ == "__main__":
    main()
