"""Benchmark of the default "learn the poem structure" run (engine/train.py) on this machine's CPU.

Usage: ``python bench/bench_train.py [--threads N] [--steps 300]``

Measures, in one process:
* the matmul rate of this machine: float32 ``torch.mm`` of two 512 x 512 matrices, best of several timed
  repetitions, as FLOP/s (2 * n^3 per product);
* the default run: ``train_bpe(512, "zh")``, a 2-layer, hidden-64, 4-head model (``ModelConfig`` defaults,
  ``max_position_embeddings=64``) trained with ``TrainConfig()`` (300 steps, batch 16, seq 64);
* tokens/s (input tokens per second of training steps, validation excluded) and the model-FLOPs utilisation
  ``MFU = 6 * N * tokens/s / matmul FLOP/s`` (Kaplan et al. 2020 / PaLM appendix B convention: 6 FLOPs per
  parameter per token for forward + backward). N counts the parameters that take part in matmuls: all
  distinct parameters minus the learned position table (a lookup); the tied embedding counts once, for the LM
  head. Attention-score FLOPs are left out, so MFU is a slight underestimate;
* the wall time of the whole run (validation included);
* p("，") after the 5th character and p("。") after the 10th of the corpus's 5-character lines, trained vs
  at initialisation (:func:`engine.train.measure_poem_structure`).

Prints a markdown table (header + one row). Timings depend on the load of the machine: on a shared machine
run it twice.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from engine.config import ModelConfig  # noqa: E402
from engine.model import CausalLM  # noqa: E402
from engine.tokenizer import load_corpus, train_bpe  # noqa: E402
from engine.train import TrainConfig, clone_model, measure_poem_structure, train  # noqa: E402


def matmul_flops(n: int = 512, reps: int = 20, rounds: int = 5) -> float:
    """Best-of-``rounds`` float32 matmul rate in FLOP/s for ``n x n @ n x n``."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b  # warm-up
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(reps):
            a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 * reps / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--steps", type=int, default=TrainConfig().steps)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    tok = train_bpe(512, "zh")
    ids = tok.encode(load_corpus("zh"))
    mc = ModelConfig(vocab_size=tok.vocab_size, max_position_embeddings=64)
    cfg = TrainConfig(steps=args.steps, warmup_steps=min(TrainConfig().warmup_steps, args.steps - 1))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        init = CausalLM(mc)
    model = clone_model(init)

    rate_before = matmul_flops()
    t0 = time.perf_counter()
    result = train(model, ids, cfg)
    wall = time.perf_counter() - t0
    rate_after = matmul_flops()
    rate = max(rate_before, rate_after)

    tokens = cfg.batch_size * cfg.seq_len
    step_seconds = sum(tokens / h.tokens_per_s for h in result.history)
    tok_per_s = tokens * len(result.history) / step_seconds
    n_pos = init.embed_positions.weight.numel() if mc.position_embedding == "learned" else 0
    n_matmul = init.num_parameters() - n_pos
    mfu = 6 * n_matmul * tok_per_s / rate
    poem = measure_poem_structure(model, tok, init_model=init, context_len=cfg.seq_len)

    print("| machine | threads | params (matmul) | steps x B x T | wall s | tokens/s | matmul GFLOP/s | MFU | "
          "val loss init -> final | p(，) init -> trained | p(。) init -> trained | lines |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {platform.machine()} {torch.get_num_threads()}-thread torch {torch.__version__} "
          f"| {torch.get_num_threads()} | {n_matmul:,} | {cfg.steps} x {cfg.batch_size} x {cfg.seq_len} "
          f"| {wall:.1f} | {tok_per_s:,.0f} | {rate / 1e9:.1f} | {100 * mfu:.1f}% "
          f"| {result.initial_val_loss:.3f} -> {result.final_val_loss:.3f} "
          f"| {poem.init_comma_prob:.4f} -> {poem.comma_prob:.3f} "
          f"| {poem.init_period_prob:.4f} -> {poem.period_prob:.3f} | {poem.n_lines} |")


if __name__ == "__main__":
    main()
