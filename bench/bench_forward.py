"""Forward-pass cost at GPT-2-small shape (``PRESETS["gpt2_small"]``, 124M parameters), T=64, batch 1.

Everything runs float32, eval mode, under ``torch.no_grad()``, with ``torch.set_num_threads(2)``. Weights are
random (no download) but identical in both models: a transformers ``GPT2LMHeadModel`` is randomised and its
weights are copied into ours, and the logits are checked to agree within 1e-3 before anything is timed.

Measurements (medians over interleaved rounds, see ``common.interleaved_medians``):

1. traced forward with the full activation record: ``ours(ids, output_attentions=True, output_hidden_states=True,
   output_activations=True)`` against ``GPT2LMHeadModel(GPT2Config(attn_implementation="eager"))(ids,
   output_attentions=True, output_hidden_states=True, use_cache=False)``. Target: ratio <= 0.9.
2. the same without the activation record (attentions + hidden states only), against the same reference. Target <= 0.9.
3. the plain forward ``ours(ids)`` (SDPA path) against its FLOP limit: ``FLOPs / R`` where
   ``FLOPs = 2 * T * (N_nonembed + V * H)`` (N_nonembed: all parameters minus the token and position
   embeddings, i.e. the 12 blocks plus the final norm; V * H: the LM-head matmul) and R is the float32
   matmul rate measured in the same run with ``torch.mm`` of ``[768, 768] @ [768, 3072]``. Target <= 1.6.
   Attention's own T^2 FLOPs (4 * T^2 * H * L, about 1% here) are left out, which makes the target stricter.
4. (information) plain forward against transformers' default SDPA GPT-2 with ``use_cache=False``.
5. (information) the matmul rate at the model's own shapes: every linear layer of ours run once on a ``[1, T, in]``
   input, grouped by shape (``[out, in]`` weights, T = 64 rows, each layer's own weights, so as cold in the cache as in
   the forward), through our ``Linear`` (what the forward runs) and through ``F.linear``. The probe of item 3 is one
   square-ish shape whose operands stay in the cache; the FLOP limit keeps its definition, and the shape-matched
   limit ``FLOPs / R_shapes`` is printed beside it.

``use_cache=False`` on the transformers side: our model builds no KV cache, so neither should the reference.

Usage: ``python bench/bench_forward.py [--repeats 20] [--warmup 5] [--threads 2] [--no-write]``. Writes
``bench/results/bench_forward.md`` unless ``--no-write``.
"""

from __future__ import annotations


from common import gpt2_state_to_ours, interleaved_medians, machine_line, markdown_table, randomize_, timing_args, write_result

import torch  # noqa: E402  (common puts the project root on sys.path first)
import torch.nn.functional as F  # noqa: E402
import transformers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

from engine.config import PRESETS  # noqa: E402
from engine.layers import Linear  # noqa: E402
from engine.model import CausalLM  # noqa: E402

T = 64
MM_SHAPE = (768, 768, 3072)  # (M, K, N) of the matmul-rate probe
MM_REPEATS = 10  # matmuls per timed call, so one call is several milliseconds


def build_models():
    config = PRESETS["gpt2_small"]
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    hf_eager = GPT2LMHeadModel(GPT2Config(attn_implementation="eager")).eval()
    randomize_(hf_eager, seed=1)
    hf_sdpa = GPT2LMHeadModel(GPT2Config(attn_implementation="sdpa")).eval()
    hf_sdpa.load_state_dict(hf_eager.state_dict())
    assert hf_eager.config._attn_implementation == "eager" and hf_sdpa.config._attn_implementation == "sdpa"
    ours = CausalLM(config)
    ours.load_state_dict(gpt2_state_to_ours(hf_eager, config), strict=True)
    ours.eval()
    return config, ours, hf_eager, hf_sdpa


def sanity(ours, hf_eager, ids) -> list[str]:
    """Check that both models compute the same thing; returns printable lines, raises on disagreement."""
    out = ours(ids, output_attentions=True, output_hidden_states=True, output_activations=True)
    ref = hf_eager(ids, output_attentions=True, output_hidden_states=True, use_cache=False)
    plain = ours(ids)
    d_logits = (out.logits - ref.logits).abs().max().item()
    d_plain = (plain.logits - ref.logits).abs().max().item()
    d_attn = max((a - b).abs().max().item() for a, b in zip(out.attentions, ref.attentions))
    d_hidden = max((a - b).abs().max().item() for a, b in zip(out.hidden_states, ref.hidden_states))
    assert d_logits < 1e-3, f"traced logits differ from transformers by {d_logits:.3g}"
    assert d_plain < 1e-3, f"plain (SDPA) logits differ from transformers by {d_plain:.3g}"
    return [
        f"- max |logits ours(traced) - transformers(eager)| = {d_logits:.2e} (must be < 1e-3)",
        f"- max |logits ours(plain, SDPA) - transformers(eager)| = {d_plain:.2e} (must be < 1e-3)",
        f"- max |attentions diff| = {d_attn:.2e}, max |hidden_states diff| (all L+1, the last after ln_f) = {d_hidden:.2e}",
        f"- logits std = {ref.logits.std().item():.3f} (the check is not trivially small numbers)",
    ]


def linears_by_shape(model) -> dict[tuple[int, int], list[Linear]]:
    """The model's linear layers grouped by weight shape ``(out, in)`` (the tied head once, as the forward runs it)."""
    groups: dict[tuple[int, int], list[Linear]] = {}
    for module in model.modules():
        if isinstance(module, Linear):
            groups.setdefault(tuple(module.weight.shape), []).append(module)
    return groups


def main() -> None:
    args = timing_args(__doc__.split("\n")[0])

    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    config, ours, hf_eager, hf_sdpa = build_models()
    ids = torch.randint(0, config.vocab_size, (1, T), generator=torch.Generator().manual_seed(2))
    checks = sanity(ours, hf_eager, ids)

    M, K, N = MM_SHAPE
    a, b = torch.randn(M, K), torch.randn(K, N)

    def matmuls():
        for _ in range(MM_REPEATS):
            torch.mm(a, b)

    fns = {
        "ours_acts": lambda: ours(ids, output_attentions=True, output_hidden_states=True, output_activations=True),
        "ours_traced": lambda: ours(ids, output_attentions=True, output_hidden_states=True),
        "hf_eager": lambda: hf_eager(ids, output_attentions=True, output_hidden_states=True, use_cache=False),
        "ours_plain": lambda: ours(ids),
        "hf_sdpa": lambda: hf_sdpa(ids, use_cache=False),
        "matmul": matmuls,
    }
    groups = linears_by_shape(ours)
    inputs = {shape: torch.randn(1, T, shape[1]) for shape in groups}  # (1, T, in)
    for shape, modules in groups.items():
        x = inputs[shape]
        fns[f"ours {shape}"] = lambda modules=modules, x=x: [m(x) for m in modules]
        fns[f"F.linear {shape}"] = lambda modules=modules, x=x: [F.linear(x, m.weight, m.bias) for m in modules]
    med = interleaved_medians(fns, warmup=args.warmup, repeats=args.repeats)

    rate = 2 * M * K * N * MM_REPEATS / (med["matmul"] / 1e3)  # FLOP/s
    n_embed = ours.embed_tokens.weight.numel() + ours.embed_positions.weight.numel()
    n_nonembed = ours.num_parameters() - n_embed
    head = config.vocab_size * config.hidden_size
    flops = 2 * T * (n_nonembed + head)
    limit_ms = flops / rate * 1e3

    def shape_rate(kind: str, shapes) -> float:
        """FLOP/s of the calls of `kind` ("ours" or "F.linear") over the layers of these weight shapes."""
        shape_flops = sum(2 * T * o * i * len(groups[(o, i)]) for o, i in shapes)
        return shape_flops / (sum(med[f"{kind} {shape}"] for shape in shapes) / 1e3)

    shape_lines = [f"  - [{T}, {i}] @ [{i}, {o}] x{len(groups[(o, i)])}: ours {shape_rate('ours', [(o, i)]) / 1e9:.1f}"
                   f", F.linear {shape_rate('F.linear', [(o, i)]) / 1e9:.1f} GFLOP/s" for o, i in groups]
    rate_shapes = shape_rate("ours", groups)
    shapes_limit_ms = flops / rate_shapes * 1e3

    def row(label, ours_ms, ref_ms, target):
        ratio = ours_ms / ref_ms
        return [label, f"{ours_ms:.1f}", f"{ref_ms:.1f}", f"{ratio:.2f}", f"<= {target:.1f}",
                "yes" if ratio <= target else "**no**"]

    rows = [
        row("full activation record + attentions + hidden states vs transformers eager (attentions + hidden states)",
            med["ours_acts"], med["hf_eager"], 0.9),
        row("attentions + hidden states, no activation record vs transformers eager (same outputs)",
            med["ours_traced"], med["hf_eager"], 0.9),
        row("plain forward (SDPA) vs FLOP limit 2·T·(N_nonembed + V·H) / matmul rate",
            med["ours_plain"], limit_ms, 1.6),
        ["(info) plain forward (SDPA) vs transformers SDPA", f"{med['ours_plain']:.1f}", f"{med['hf_sdpa']:.1f}",
         f"{med['ours_plain'] / med['hf_sdpa']:.2f}", "-", "-"],
    ]
    table = markdown_table(["measurement", "ours ms", "reference ms", "ratio", "target", "met?"], rows)
    details = [
        f"- shape: GPT-2 small (L={config.num_hidden_layers}, H={config.hidden_size}, "
        f"heads={config.num_attention_heads}, I={config.intermediate_size}, V={config.vocab_size}), T={T}, batch 1, "
        "float32, eval, no_grad",
        f"- medians of {args.repeats} interleaved rounds after {args.warmup} warm-up rounds",
        f"- matmul probe: torch.mm [{M}, {K}] @ [{K}, {N}] x{MM_REPEATS}: {med['matmul']:.1f} ms "
        f"-> R = {rate / 1e9:.1f} GFLOP/s",
        f"- FLOPs = 2·T·(N_nonembed + V·H) = 2·{T}·({n_nonembed:,} + {head:,}) = {flops / 1e9:.2f} GFLOP "
        f"-> limit {limit_ms:.1f} ms",
        f"- (information) matmul rate at the model's shapes, each layer's own weights once, [out, in] layout "
        f"(R_shapes: our Linear over all of them = {rate_shapes / 1e9:.1f} GFLOP/s = {rate_shapes / rate:.2f} R):",
        *shape_lines,
        f"- (information) shape-matched limit: the same FLOPs at R_shapes -> {shapes_limit_ms:.1f} ms; "
        f"plain forward / shape-matched limit = {med['ours_plain'] / shapes_limit_ms:.2f}",
        *checks,
    ]
    text = "\n".join([
        "## bench_forward: GPT-2-small forward, T=64, batch 1",
        "",
        f"Machine: {machine_line()}",
        "",
        table,
        "",
        *details,
        "",
    ])
    print(text)
    if not args.no_write:
        print(f"written to {write_result('bench_forward', text)}")


if __name__ == "__main__":
    main()
