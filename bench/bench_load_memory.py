"""Peak memory of engine.checkpoints.load_pretrained on a GPT-2-small-shaped checkpoint.

Creates a randomly initialised ``GPT2LMHeadModel`` (GPT-2 small: 124M parameters, float32) with transformers,
writes it with ``save_pretrained`` to a temporary folder (and, with ``--bin``, a ``pytorch_model.bin`` copy),
then loads it with our loader in a fresh subprocess and reports

    peak_extra_RSS = ru_maxrss after loading - RSS after imports (before loading)
    ratio          = peak_extra_RSS / size of the weights file

Target: ratio <= 2 (the loader builds the model on the meta device and assigns tensors one by one, so about
one copy of the weights should be resident). Usage: ``python bench/bench_load_memory.py [--bin]``.
Offline: nothing is downloaded (random init from a config).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CREATE = r"""
import sys
from pathlib import Path
import torch, transformers
transformers.logging.set_verbosity_error()
folder, bin_folder = Path(sys.argv[1]), (Path(sys.argv[2]) if len(sys.argv) > 2 else None)
torch.manual_seed(0)
hf = transformers.GPT2LMHeadModel(transformers.GPT2Config())  # GPT-2 small shape (124M), random init
hf.save_pretrained(folder)
if bin_folder is not None:
    bin_folder.mkdir()
    (bin_folder / "config.json").write_text((folder / "config.json").read_text())
    torch.save(hf.state_dict(), bin_folder / "pytorch_model.bin")
"""

MEASURE = r"""
import gc, json, resource, sys
sys.path.insert(0, sys.argv[1])
import torch
import engine.checkpoints as ck

def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])

gc.collect()
baseline = status_kib("VmRSS")
baseline_maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
model = ck.load_pretrained(sys.argv[2])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
hwm = status_kib("VmHWM")  # per-process high-water mark, a cross-check of ru_maxrss
after = status_kib("VmRSS")
n = sum(p.numel() * p.element_size() for p in model.parameters())
with torch.no_grad():
    model(torch.zeros(1, 4, dtype=torch.long))
print(json.dumps({"baseline_kib": baseline, "baseline_maxrss_kib": baseline_maxrss, "peak_kib": peak,
                  "hwm_kib": hwm, "after_kib": after, "param_bytes": n,
                  "tied": model.lm_head.weight is model.embed_tokens.weight}))
"""


def _run(code: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"subprocess failed:\n{out.stderr[-3000:]}")
    return out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", action="store_true", help="also measure a pytorch_model.bin copy")
    args = parser.parse_args()
    # This parent never imports torch: ru_maxrss survives fork+exec on Linux, so a large parent would inflate
    # the child's reading. Creation and measurement each run in their own subprocess.
    with tempfile.TemporaryDirectory() as tmp:
        folder, bin_folder = Path(tmp) / "gpt2-small-random", Path(tmp) / "gpt2-small-bin"
        _run(CREATE, str(folder), *([str(bin_folder)] if args.bin else []))
        cases = [("model.safetensors", folder, folder / "model.safetensors")]
        if args.bin:
            cases.append(("pytorch_model.bin", bin_folder, bin_folder / "pytorch_model.bin"))
        for label, path, weights in cases:
            r = json.loads(_run(MEASURE, str(ROOT), str(path)).strip().splitlines()[-1])
            size = weights.stat().st_size
            extra = (r["peak_kib"] - r["baseline_kib"]) * 1024
            hwm_extra = (r["hwm_kib"] - r["baseline_kib"]) * 1024
            print(f"{label}: file {size / 2**20:.1f} MiB, params {r['param_bytes'] / 2**20:.1f} MiB, "
                  f"baseline RSS {r['baseline_kib'] / 1024:.1f} MiB (ru_maxrss before load "
                  f"{r['baseline_maxrss_kib'] / 1024:.1f} MiB), peak ru_maxrss {r['peak_kib'] / 1024:.1f} MiB, "
                  f"peak extra {extra / 2**20:.1f} MiB, ratio peak_extra/file = {extra / size:.2f} (target <= 2; "
                  f"VmHWM cross-check {hwm_extra / size:.2f}), RSS after load {(r['after_kib'] - r['baseline_kib']) / 1024:.1f} MiB extra, "
                  f"tied={r['tied']}")


if __name__ == "__main__":
    main()
