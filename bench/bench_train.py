"""Benchmark of the default "learn the poem structure" run (engine/train/) on this machine's CPU.

Usage: ``python bench/bench_train.py [--threads N] [--steps 300]``

Measures, in one process:
* the matmul rate of this machine: float32 ``torch.mm`` of two 512 x 512 matrices, best of several timed
  repetitions, as FLOP/s (2 * n^3 per product);
* the default run: ``train_bpe(512, "zh")``, a 2-layer, hidden-64, 4-head model (``ModelConfig`` defaults,
  ``max_position_embeddings=64``) trained with ``TrainConfig()`` (300 steps, batch 16, seq 64);
* tokens/s (input tokens per second of training steps, validation excluded);
* MFU, the standard model-FLOPs utilisation (Chowdhery et al. 2022, PaLM, appendix B): achieved model FLOP/s
  over the hardware's peak FLOP/s. Model FLOPs per token = ``6 * N + 12 * L * H * T`` (:func:`train_flops_per_token`):
  6 per matmul parameter per token for forward + backward (Kaplan et al. 2020), plus the attention scores and
  the weighted sum of the values, ``2 * 2 * T * H`` per layer forward, times 3 with the backward pass (the
  masked half of the causal T x T product is counted, as in PaLM). N counts the parameters that take part in
  matmuls: all distinct parameters minus the learned position table (a lookup); the tied embedding counts once,
  for the LM head. The peak is stated: ``--peak-gflops``, or by default the nominal
  ``threads x clock x FLOP/cycle`` (clock from ``/sys/.../cpuinfo_max_freq`` or ``/proc/cpuinfo``; 32 float32
  FLOP/cycle with AVX2 + FMA, 64 with AVX-512: two FMA units), printed with its derivation;
* ``vs matmul``: the same achieved FLOP/s over this machine's measured float32 ``torch.mm`` rate on two
  512 x 512 matrices (best of several repetitions, 2 n^3 FLOPs per product). This is not MFU: it compares the
  run with what PyTorch reaches on one mid-sized matmul here, not with the hardware;
* the wall time of the whole run (validation included);
* p("，") after the 5th character and p("。") after the 10th of the corpus's 5-character lines, trained vs
  at initialisation (:func:`analysis.probes.measure_poem_structure`).

Prints a markdown table (header + one row). Timings depend on the load of the machine: on a shared machine
run it twice.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

try:
    import common  # noqa: F401  (run as a script: puts the project root on sys.path)
except ModuleNotFoundError:  # loaded by tests/bench/test_bench_train.py, where the root is already on sys.path
    pass

import torch  # noqa: E402

from engine.config import ModelConfig  # noqa: E402
from engine.model import CausalLM  # noqa: E402
from engine.tokenizer import load_corpus, train_bpe  # noqa: E402
from analysis.probes import measure_poem_structure  # noqa: E402
from engine.train import TrainConfig, clone_model, train  # noqa: E402


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


def train_flops_per_token(n_matmul: int, layers: int, hidden: int, seq_len: int) -> int:
    """Training FLOPs per token, PaLM appendix B: ``6 * N`` for the matmul weights plus ``12 * L * H * T`` for
    attention (Q K^T and the weighted sum of V: 2 * 2 * T * H per layer forward, x3 with the backward pass)."""
    return 6 * n_matmul + 12 * layers * hidden * seq_len


def nominal_peak_flops(threads: int) -> tuple[float, str]:
    """``threads x clock x float32 FLOP/cycle`` and how it was derived (clock in GHz from cpufreq or cpuinfo)."""
    flags = clock_ghz = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
        mhz = next((line.split(":")[1] for line in cpuinfo.splitlines() if line.startswith("cpu MHz")), "")
        clock_ghz, source = (float(mhz) / 1000 if mhz else 0.0), "/proc/cpuinfo cpu MHz"
        max_freq = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        if max_freq.exists():
            clock_ghz, source = int(max_freq.read_text()) / 1e6, "cpuinfo_max_freq"
    except OSError:
        clock_ghz, source = 0.0, "unknown"
    per_cycle = 64 if " avx512f" in flags else 32 if (" avx2" in flags and " fma" in flags) else 8
    peak = threads * clock_ghz * 1e9 * per_cycle
    return peak, f"{threads} threads x {clock_ghz:.3g} GHz ({source}) x {per_cycle} FLOP/cycle"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--steps", type=int, default=TrainConfig().steps)
    ap.add_argument("--peak-gflops", type=float, default=0.0,
                    help="peak float32 GFLOP/s of the hardware for MFU (0: nominal threads x clock x FLOP/cycle)")
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
    flops_per_token = train_flops_per_token(n_matmul, mc.num_hidden_layers, mc.hidden_size, cfg.seq_len)
    achieved = flops_per_token * tok_per_s  # model FLOP/s
    if args.peak_gflops > 0:
        peak, peak_source = args.peak_gflops * 1e9, "stated with --peak-gflops"
    else:
        peak, peak_source = nominal_peak_flops(torch.get_num_threads())
    mfu = achieved / peak if peak > 0 else float("nan")
    vs_matmul = achieved / rate
    poem = measure_poem_structure(model, tok, init_model=init, context_len=cfg.seq_len)

    print(f"Model FLOPs per token = 6 N + 12 L H T = 6 x {n_matmul:,} + 12 x {mc.num_hidden_layers} x "
          f"{mc.hidden_size} x {cfg.seq_len} = {flops_per_token:,} (attention {12 * mc.num_hidden_layers * mc.hidden_size * cfg.seq_len / flops_per_token:.1%}).")
    print(f"Peak = {peak / 1e9:.1f} GFLOP/s: {peak_source}.")
    if rate > peak > 0:
        print("Note: the measured matmul rate is above this peak, so the clock read is not the boost clock: "
              "pass --peak-gflops with the hardware's real peak.")
    print("| machine | threads | params (matmul) | steps x B x T | wall s | tokens/s | model GFLOP/s | peak GFLOP/s "
          "| MFU | matmul GFLOP/s | vs matmul | val loss init -> final | p(，) init -> trained | p(。) init -> trained "
          "| lines |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {platform.machine()} {torch.get_num_threads()}-thread torch {torch.__version__} "
          f"| {torch.get_num_threads()} | {n_matmul:,} | {cfg.steps} x {cfg.batch_size} x {cfg.seq_len} "
          f"| {wall:.1f} | {tok_per_s:,.0f} | {achieved / 1e9:.1f} | {peak / 1e9:.1f} | {100 * mfu:.1f}% "
          f"| {rate / 1e9:.1f} | {100 * vs_matmul:.1f}% "
          f"| {result.initial_val_loss:.3f} -> {result.final_val_loss:.3f} "
          f"| {poem.init_comma_prob:.4f} -> {poem.comma_prob:.3f} "
          f"| {poem.init_period_prob:.4f} -> {poem.period_prob:.3f} | {poem.n_lines} |")


if __name__ == "__main__":
    main()
