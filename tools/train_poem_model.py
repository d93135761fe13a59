"""Train the shipped Tang-poem model (``tang-poems-small``) with the project's own loop, from a seed.

    python -m tools.train_poem_model            # writes engine/data/models/tang-poems-small/
    python -m tools.train_poem_model --check    # retrains into a temporary folder, compares every file's SHA-256

What it does, all deterministic (one CPU thread, seeded weights, seeded batch order):

1. Split the Tang poems (``engine/data/tang_poems.txt``, 313 entries separated by blank lines) by entry index:
   every 10th entry (index 9, 19, ...) is HELD OUT and never trained on (``engine.checkpoints.poem.split_poems``).
2. Tokenizer: the project's own character-level BPE (``engine.tokenizer.train_bpe``) on the Tang poems with one
   id per distinct character plus ``[UNK]`` (no merges), so one token is one character and "the 5th character of
   a line" is a token position. (The alphabet comes from the whole file, held-out entries included: the
   tokenizer knows every character exists; the model never trained on the held-out text.)
3. Model: a 4-layer Pre-Norm decoder with RoPE (:data:`MODEL_CONFIG`), weights drawn with ``torch.manual_seed(SEED)``.
4. Training: ``engine.train.Trainer`` (AdamW, warmup + cosine, clipping) on random windows of the training poems
   (:data:`TRAIN_CONFIG`); its validation batches are windows of the held-out poems. 250 steps: the corpus is
   small (26,532 training characters), and the held-out loss is lowest after about 100-150 updates and rises
   past about 200 as the model starts to memorise (docs/poem-model.md has the curve).
5. Measures on the held-out poems only (``analysis.probes.poem_model_metrics``, which the tests call again): the
   loss over every held-out token against ln V, p("，") after the 5th character of a 5-character line and p("。")
   after the 10th (``analysis.probes.measure_poem_structure`` on the held-out text).
6. Writes ``model.safetensors`` (float32), ``config.json``, ``tokenizer.json``, ``metrics.json`` (no wall time, so
   every file is reproducible) and prints every file's SHA-256 (``FILE_SHA256`` in ``engine/checkpoints/poem.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

# MKL (torch's CPU BLAS here) may round differently with the memory alignment of its inputs, so two runs of the
# same script could differ in the last bits; strict conditional numerical reproducibility removes that. It must be
# set before MKL loads, i.e. before torch is imported.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

import torch  # noqa: E402

from analysis.probes import poem_model_metrics  # noqa: E402
from engine.checkpoints import poem  # noqa: E402
from engine.checkpoints.explorer import save_model  # noqa: E402
from engine.checkpoints.load import load_from_folder  # noqa: E402
from engine.config import ModelConfig  # noqa: E402
from engine.model import CausalLM  # noqa: E402
from engine.seeding import seeded  # noqa: E402
from engine.tokenizer import TextTokenizer  # noqa: E402
from engine.train import TrainConfig, Trainer  # noqa: E402

SEED = 0
#: vocab_size is replaced by the tokenizer's.
MODEL_CONFIG = ModelConfig(vocab_size=2, hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                           intermediate_size=512, hidden_act="gelu", norm_type="layernorm", norm_position="pre",
                           position_embedding="rope", max_position_embeddings=512, bias=True,
                           tie_word_embeddings=True)
TRAIN_CONFIG = TrainConfig(steps=250, learning_rate=3e-3, warmup_steps=100, min_lr_ratio=0.1, batch_size=16,
                           seq_len=128, weight_decay=0.1, grad_clip=1.0, eval_every=50, eval_batches=4, seed=SEED)


def train_poem_model(out_dir: Path, steps: int | None = None, log=print, eval_every: int | None = None) -> dict:
    """Train from :data:`SEED` and write the model folder; returns the metrics written."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    tokenizer = poem.build_tokenizer()
    train_ids, heldout_ids = poem.token_streams(tokenizer)
    cfg = TRAIN_CONFIG if steps is None else TRAIN_CONFIG.replace(
        steps=steps, warmup_steps=min(TRAIN_CONFIG.warmup_steps, steps - 1))
    if eval_every:
        cfg = cfg.replace(eval_every=eval_every)
    model_cfg = MODEL_CONFIG.replace(vocab_size=tokenizer.vocab_size)
    with seeded(SEED):
        model = CausalLM(model_cfg)
    log(f"model: {model.num_parameters():,} parameters, vocab {tokenizer.vocab_size}; "
        f"{len(train_ids):,} training tokens, {len(heldout_ids):,} held-out tokens; {cfg.steps} steps")
    # Trainer splits one stream: the held-out stream goes at the end, val_fraction picks exactly its length.
    stream = torch.cat([train_ids, heldout_ids])
    frac = (len(heldout_ids) + 0.5) / len(stream)
    trainer = Trainer(model, stream, cfg.replace(val_fraction=frac))
    assert torch.equal(trainer.val_ids, heldout_ids) and torch.equal(trainer.train_ids, train_ids)
    t0 = time.perf_counter()
    curve = [(0, trainer.evaluate())]
    for _ in range(cfg.steps):
        info = trainer.step()
        if info.val_loss is not None:
            curve.append((info.step, info.val_loss))
            log(f"step {info.step:5d}  train {info.loss:.3f}  held-out {info.val_loss:.3f}  "
                f"lr {info.lr:.2e}  {info.tokens_per_s:,.0f} tok/s  {info.elapsed_s:.0f} s")
    train_s = time.perf_counter() - t0
    model.eval()
    out_dir = Path(out_dir)
    save_model(model, out_dir)
    tokenizer.save(out_dir)  # out_dir/tokenizer.json
    # No wall time here (it differs run to run): every file the script writes is reproducible bit for bit.
    training = {"steps": cfg.steps, "seq_len": cfg.seq_len, "seed": SEED, "torch": torch.__version__,
                "threads": 1, "heldout_curve": [[s, round(v, 4)] for s, v in curve]}
    log(f"trained in {train_s:.0f} s")
    return write_metrics(out_dir, model, tokenizer, training, log)


def write_metrics(out_dir: Path, model, tokenizer, training: dict, log=print) -> dict:
    """Measure the model on the held-out poems, write ``metrics.json``, print every file's SHA-256."""
    metrics = poem_model_metrics(model, tokenizer, poem.training_text()[1], training["seq_len"])
    metrics["training"] = training
    (out_dir / poem.METRICS_NAME).write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    log(json.dumps({k: v for k, v in metrics.items() if k != "training"}, ensure_ascii=False))
    digests = {p.name: poem.sha256_file(p) for p in sorted(out_dir.iterdir()) if p.is_file()}
    log("FILE_SHA256 = " + json.dumps(digests, indent=4))
    return metrics


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=poem.MODEL_DIR, help="output folder (default: the shipped one)")
    ap.add_argument("--steps", type=int, default=None, help="fewer steps for a dry run (not the shipped model)")
    ap.add_argument("--eval-every", type=int, default=None, help="held-out loss every N steps (dry runs)")
    ap.add_argument("--check", action="store_true",
                    help="train into a temporary folder and compare its SHA-256 with the shipped weights")
    ap.add_argument("--metrics-only", action="store_true",
                    help="only re-measure the model already in --out and rewrite its metrics.json")
    args = ap.parse_args(argv)
    if args.metrics_only:
        torch.set_num_threads(1)
        folder = args.out
        old = json.loads((folder / poem.METRICS_NAME).read_text(encoding="utf-8"))
        write_metrics(folder, load_from_folder(folder), TextTokenizer.from_folder(folder), old["training"])
        return 0
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            train_poem_model(Path(tmp), args.steps)
            got = {name: poem.sha256_file(Path(tmp) / name) for name in poem.FILE_SHA256}
        for name, want in poem.FILE_SHA256.items():
            print(f"{name}: {'identical' if got[name] == want else 'DIFFERS: ' + got[name] + ' vs shipped ' + want}")
        return 0 if got == poem.FILE_SHA256 else 1
    train_poem_model(args.out, args.steps, eval_every=args.eval_every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
