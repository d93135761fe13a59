"""Inference time against sequence length, ours vs transformers GPT-2, at the NumPy-decoder shape.

The NumPy GPT decoder tutorial (``PRESETS["numpy_decoder"]``: hidden 256, 8 heads, 6 layers, FFN 1024, vocab
10000, ReLU, Post-LN, untied head) times inference as the sequence grows. Here the same shape runs in our engine
and in a transformers ``GPT2LMHeadModel`` configured with the same sizes, ReLU and an untied head, at
T in [16, 32, 64, 128, 256], batch 1, float32, eval, ``torch.no_grad()``, ``torch.set_num_threads(2)``.

Two modes per T (medians over interleaved rounds; ratio = ours / transformers, lower is better):

* plain:  ``ours(ids)`` (SDPA path) vs ``gpt2(ids, use_cache=False)`` (transformers' default SDPA attention);
* traced: ``ours(ids, output_attentions=True, output_hidden_states=True, output_activations=True)`` vs the eager
  GPT-2 with ``output_attentions=True, output_hidden_states=True, use_cache=False``.

The one difference in computation: the preset is Post-LN and GPT-2 is Pre-LN. The norms are the same in
number and size, so the work is the same; the outputs are not. As a sanity check the script also builds our
model with ``norm_position="pre"``, copies the GPT-2 weights into it and asserts that the logits agree within
1e-3 (printed below the table).

Usage: ``python bench/bench_timing_vs_length.py [--repeats 20] [--warmup 5] [--threads 2] [--no-write]``. Writes
``bench/results/bench_timing_vs_length.md`` unless ``--no-write``.
"""

from __future__ import annotations


from common import gpt2_state_to_ours, interleaved_medians, machine_line, markdown_table, randomize_, timing_args, write_result

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

from engine.config import PRESETS  # noqa: E402
from engine.model import CausalLM  # noqa: E402

LENGTHS = (16, 32, 64, 128, 256)


def hf_config(config, attn: str) -> GPT2Config:
    return GPT2Config(
        vocab_size=config.vocab_size, n_positions=config.max_position_embeddings, n_embd=config.hidden_size,
        n_layer=config.num_hidden_layers, n_head=config.num_attention_heads, n_inner=config.intermediate_size,
        activation_function=config.hidden_act, layer_norm_epsilon=config.norm_eps,
        tie_word_embeddings=config.tie_word_embeddings, attn_implementation=attn,
    )


def main() -> None:
    args = timing_args(__doc__.split("\n")[0])

    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    transformers.logging.set_verbosity_error()
    config = PRESETS["numpy_decoder"]

    torch.manual_seed(0)
    hf_eager = randomize_(GPT2LMHeadModel(hf_config(config, "eager")).eval(), seed=1)
    hf_sdpa = GPT2LMHeadModel(hf_config(config, "sdpa")).eval()
    hf_sdpa.load_state_dict(hf_eager.state_dict())
    assert hf_eager.config._attn_implementation == "eager" and hf_sdpa.config._attn_implementation == "sdpa"
    state = gpt2_state_to_ours(hf_eager, config)
    ours = CausalLM(config).eval()  # the preset itself (Post-LN): this is what is timed
    ours.load_state_dict(state, strict=True)
    twin = CausalLM(config.replace(norm_position="pre")).eval()  # Pre-LN twin: must equal GPT-2 exactly
    twin.load_state_dict(state, strict=True)

    gen = torch.Generator().manual_seed(2)
    rows, checks = [], []
    for T in LENGTHS:
        ids = torch.randint(0, config.vocab_size, (1, T), generator=gen)
        d = (twin(ids).logits - hf_eager(ids, use_cache=False).logits).abs().max().item()
        assert d < 1e-3, f"T={T}: Pre-LN twin logits differ from transformers by {d:.3g}"
        checks.append(f"T={T}: {d:.1e}")
        med = interleaved_medians({
            "ours_plain": lambda: ours(ids),
            "hf_plain": lambda: hf_sdpa(ids, use_cache=False),
            "ours_traced": lambda: ours(ids, output_attentions=True, output_hidden_states=True, output_activations=True),
            "hf_traced": lambda: hf_eager(ids, output_attentions=True, output_hidden_states=True, use_cache=False),
        }, warmup=args.warmup, repeats=args.repeats)
        rows.append([
            str(T),
            f"{med['ours_plain']:.2f}", f"{med['hf_plain']:.2f}", f"{med['ours_plain'] / med['hf_plain']:.2f}",
            f"{med['ours_traced']:.2f}", f"{med['hf_traced']:.2f}", f"{med['ours_traced'] / med['hf_traced']:.2f}",
        ])
        print(" | ".join(rows[-1]), flush=True)

    table = markdown_table(
        ["T", "ours plain ms", "transformers SDPA ms", "ratio", "ours full trace ms", "transformers eager ms",
         "ratio"],
        rows,
    )
    text = "\n".join([
        "## bench_timing_vs_length: numpy_decoder shape (H=256, 8 heads, 6 layers, FFN 1024, V=10000)",
        "",
        f"Machine: {machine_line()}",
        "",
        table,
        "",
        f"- batch 1, float32, eval, no_grad; medians of {args.repeats} interleaved rounds after {args.warmup} "
        "warm-up rounds per T; ratio = ours / transformers (lower is better)",
        "- plain: `ours(ids)` vs `GPT2LMHeadModel` (SDPA) `(ids, use_cache=False)`; full trace: "
        "`ours(ids, output_attentions=True, output_hidden_states=True, output_activations=True)` vs eager GPT-2 with "
        "`output_attentions=True, output_hidden_states=True, use_cache=False`",
        "- ours is the preset as-is (Post-LN); GPT-2 is Pre-LN with the same sizes, ReLU and an untied head "
        "(same work, different outputs)",
        "- sanity, max |logits| difference of our Pre-LN twin (GPT-2 weights copied) vs transformers: "
        + ", ".join(checks),
        "",
    ])
    print(text)
    if not args.no_write:
        print(f"written to {write_result('bench_timing_vs_length', text)}")


if __name__ == "__main__":
    main()
