"""Helpers shared by the timing benchmarks: interleaved timing, GPT-2 weight copying, markdown tables.

Timing is only ever reported as a ratio against a reference measured in the same run, with the candidates
interleaved (ours, theirs, ours, theirs, ...) so that load on a shared machine hits both alike.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded: all models are random-init from configs

import torch  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def interleaved_medians(fns: dict[str, Callable[[], object]], warmup: int = 5, repeats: int = 20) -> dict[str, float]:
    """Median wall time in milliseconds of each zero-argument callable.

    Every callable runs ``warmup`` times first (untimed), then ``repeats`` rounds follow; each round runs every
    callable once, starting from a different one each round (rotation), so drift in machine load is shared.
    """
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            t0 = time.perf_counter()
            fns[name]()
            times[name].append((time.perf_counter() - t0) * 1e3)
    return {name: statistics.median(ts) for name, ts in times.items()}


def randomize_(module: torch.nn.Module, seed: int, std: float = 0.02) -> torch.nn.Module:
    """Overwrite every parameter with N(0, std) noise (norm weights around 1) so biases and norms matter."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=gen) * std
            p.copy_(1.0 + 10 * noise if ("ln_" in name and name.endswith("weight")) else noise)
    return module


def gpt2_state_to_ours(hf_model, config) -> dict[str, torch.Tensor]:
    """A transformers ``GPT2LMHeadModel``'s weights under our names, through the loader's own GPT-2 mapping
    (:mod:`engine.checkpoints.gpt2`), plus the tied ``lm_head.weight`` so that a strict ``load_state_dict`` works."""
    from engine.checkpoints import convert_state_dict

    state = convert_state_dict("gpt2", config, hf_model.state_dict().items())
    if config.tie_word_embeddings:
        state["lm_head.weight"] = state["embed_tokens.weight"]  # the same tensor, as in the model
    return state


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_line() -> str:
    """Date, CPU model, core count, threads used and library versions, for the results header."""
    import transformers

    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{datetime.date.today().isoformat()}, {cpu}, {os.cpu_count()} cores, torch.set_num_threads("
            f"{torch.get_num_threads()}), torch {torch.__version__}, transformers {transformers.__version__}, "
            f"Python {platform.python_version()}")


def timing_args(description: str, extra=None):
    """The command line shared by the timing benchmarks: ``--repeats --warmup --threads --no-write``
    (``extra(parser)`` adds a script's own options)."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    parser.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/")
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def write_result(name: str, text: str) -> Path:
    """Write ``bench/results/<name>.md`` and return its path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.md"
    path.write_text(text)
    return path


def report(name: str, text: str, write: bool = True) -> None:
    """Print a result table and, unless ``write`` is False, save it with :func:`write_result`."""
    print(text)
    if write:
        print("wrote", write_result(name, text))
