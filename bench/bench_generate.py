"""Generation speed with and without the KV cache: tokens per second for 64 new tokens, same run.

Two shapes: the app's default sidebar model (V 4000, H 64, 2 layers, 4 heads, FFN 256, learned positions) and
GPT-2 small (``PRESETS["gpt2_small"]``, 124M parameters). Random weights, float32, batch 1, a 16-token prompt,
greedy decoding with :func:`engine.generation.generate`:

* with the cache: one prefill of the prompt, then 63 forwards of a single token against the cache;
* without: every step reruns the whole sequence (16, 17, ..., 79 tokens), ``logits_to_keep=1`` as well.

Both runs must produce the same 64 tokens (checked before timing). Medians of interleaved rounds
(``common.interleaved_medians``), so machine load hits both alike; the speed-up is the ratio of the two.

Usage: ``python bench/bench_generate.py [--repeats 5] [--warmup 1] [--threads 2] [--no-write]``.
Writes ``bench/results/bench_generate.md`` unless ``--no-write``.
"""

from __future__ import annotations

from common import interleaved_medians, machine_line, markdown_table, timing_args, report

import torch  # noqa: E402  (common puts the project root on sys.path first)

from engine import CausalLM, ModelConfig  # noqa: E402
from engine.config import PRESETS  # noqa: E402
from engine.generation import forward_flops, generate  # noqa: E402

PROMPT, NEW = 16, 64
SHAPES = {
    "default sidebar model": ModelConfig(  # ui/sidebar.py DEFAULTS
        vocab_size=4000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
        hidden_act="gelu", norm_type="layernorm", norm_position="pre", position_embedding="learned",
        tie_word_embeddings=True, max_position_embeddings=256),
    "GPT-2 small": PRESETS["gpt2_small"],
}


def main() -> None:
    import sys

    if "--repeats" not in sys.argv:  # GPT-2 small without a cache takes seconds per run: fewer rounds
        sys.argv += ["--repeats", "5"]
    if "--warmup" not in sys.argv:
        sys.argv += ["--warmup", "1"]
    args = timing_args(__doc__.splitlines()[0])
    torch.set_num_threads(args.threads)
    rows, notes = [], []
    for name, config in SHAPES.items():
        torch.manual_seed(0)
        model = CausalLM(config)
        prompt = torch.randint(0, config.vocab_size, (1, PROMPT), generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            cached = generate(model, prompt, NEW)
            full = generate(model, prompt, NEW, use_cache=False)
        assert torch.equal(cached, full), f"{name}: cached and uncached greedy runs differ"
        med = interleaved_medians({
            "cache": lambda: generate(model, prompt, NEW),
            "no_cache": lambda: generate(model, prompt, NEW, use_cache=False),
        }, warmup=args.warmup, repeats=args.repeats)
        tps_cache, tps_full = NEW / (med["cache"] / 1e3), NEW / (med["no_cache"] / 1e3)
        flops_cache = forward_flops(config, PROMPT, PROMPT) + sum(
            forward_flops(config, 1, s) for s in range(PROMPT + 1, PROMPT + NEW))
        flops_full = sum(forward_flops(config, s, s) for s in range(PROMPT, PROMPT + NEW))
        rows.append([name, f"{med['cache']:.0f}", f"{tps_cache:,.3g}", f"{med['no_cache']:.0f}", f"{tps_full:,.3g}",
                     f"**{tps_cache / tps_full:.1f}×**", f"{flops_full / flops_cache:.1f}×"])
        notes.append(f"- {name}: L={config.num_hidden_layers}, H={config.hidden_size}, heads={config.num_attention_heads}, "
                     f"V={config.vocab_size}, {model.num_parameters():,} parameters; identical 64 greedy tokens")
        print(rows[-1], flush=True)
    table = markdown_table(["model", "with cache ms", "tokens/s", "without cache ms", "tokens/s", "speed-up",
                            "FLOP ratio (formula)"], rows)
    text = "\n".join([
        f"## bench_generate: {NEW} new tokens after a {PROMPT}-token prompt, greedy, batch 1",
        "",
        f"Machine: {machine_line()}",
        "",
        table,
        "",
        *notes,
        f"- medians of {args.repeats} interleaved rounds after {args.warmup} warm-up round(s); wall time of the whole "
        "`generate` call (prefill included)",
        "- FLOP ratio: `engine.generation.forward_flops` summed over the steps without / with the cache",
        "",
    ])
    report("bench_generate", text, write=not args.no_write)


if __name__ == "__main__":
    main()
