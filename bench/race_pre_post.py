"""Measure the Pre-Norm vs Post-Norm race on the bundled Tang poems (CPU, deterministic).

Usage: ``python bench/race_pre_post.py [--steps 80] [--seeds 0 1 2] [--layers 12]``

For each seed and warmup setting, :func:`engine.train.race_pre_post` trains a Pre-Norm and a Post-Norm model
from the same initial weights on the same batches. Printed per run: the mean training loss of the last 10
steps, the final validation loss, and the gradient-norm profile across depth: ``last/first`` is the ratio of
the gradient norm of the last block to that of the first block, at step 1 (initialisation) and averaged
over all steps. Xiong et al. 2020: Post-Norm's gradients grow towards the output; Pre-Norm's do not.
"""

from __future__ import annotations

import argparse
import statistics

import common  # noqa: E402,F401  (first project import: puts the project root on sys.path)

import torch  # noqa: E402

from engine.config import ModelConfig  # noqa: E402
from engine.tokenizer import load_corpus, train_bpe  # noqa: E402
from engine.train import TrainConfig, race_pre_post  # noqa: E402


def layer_means(history) -> list[float]:
    """Per-block gradient norm averaged over the steps of ``history``."""
    return [statistics.mean(col) for col in zip(*(h.layer_grad_norms for h in history))]


def profile(history, first_only: bool) -> float:
    """last block / first block gradient norm: at step 1, or as a ratio of the means over all steps."""
    means = layer_means(history[:1] if first_only else history)
    return means[-1] / means[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--warmups", type=int, nargs="+", default=[0, 20])
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    tok = train_bpe(512, "zh")
    ids = tok.encode(load_corpus("zh"))
    mc = ModelConfig(vocab_size=tok.vocab_size, hidden_size=64, num_hidden_layers=args.layers,
                     num_attention_heads=4, intermediate_size=256, max_position_embeddings=32)
    print("| warmup | seed | placement | train loss (last 10) | val loss init -> final | "
          "grad last/first @step1 | grad last/first (means over steps) | grad norm mean | "
          "per-layer grad norm @step1 | per-layer grad norm, mean over steps |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary: dict = {}
    for warmup in args.warmups:
        for seed in args.seeds:
            cfg = TrainConfig(steps=args.steps, learning_rate=args.lr, warmup_steps=warmup, batch_size=8,
                              seq_len=32, eval_every=args.steps, eval_batches=4, seed=seed)
            race = race_pre_post(mc, ids, cfg)
            for name, r in race.results().items():
                tl = statistics.mean(r.losses[-10:])
                p1, pm = profile(r.history, True), profile(r.history, False)
                gm = statistics.mean(h.grad_norm for h in r.history)
                summary.setdefault((warmup, name), []).append((tl, r.final_val_loss, p1, pm))
                print(f"| {warmup} | {seed} | {name} | {tl:.3f} | {r.initial_val_loss:.3f} -> "
                      f"{r.final_val_loss:.3f} | {p1:.2f} | {pm:.2f} | {gm:.3f} | "
                      f"{' '.join(f'{v:.3f}' for v in r.history[0].layer_grad_norms)} | "
                      f"{' '.join(f'{v:.3f}' for v in layer_means(r.history))} |", flush=True)
    print("\nmeans over seeds:")
    for (warmup, name), rows in summary.items():
        cols = [statistics.mean(c) for c in zip(*rows)]
        print(f"warmup={warmup:3d} {name:4s}: train {cols[0]:.3f}  val {cols[1]:.3f}  "
              f"last/first@1 {cols[2]:.2f}  last/first mean {cols[3]:.2f}")


if __name__ == "__main__":
    main()
