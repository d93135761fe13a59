"""The model's anatomy: parameters per component, what tying saves, and one block walked through step by step
with the shape of every intermediate tensor (the Overview page)."""

from __future__ import annotations

import pandas as pd

from analysis.trace import vector_norm
from engine.config import ModelConfig
from engine.model import CausalLM, CausalLMOutput


def parameter_table(model: CausalLM) -> pd.DataFrame:
    """Parameter counts grouped by component type, tied weights counted once.

    Columns: ``component`` ("embed_tokens", "embed_positions", "self_attn", "mlp", "block norms" (the two
    norms of every block), "final norm", "lm_head"), ``params``, ``share`` (fraction of the total). Plus :func:`tying_savings` for the head.
    """
    groups: dict[str, int] = {}
    for name, count in model.parameter_breakdown():
        key = name.split(".")[-1] if name.startswith("layers.") else name
        key = {"norms": "block norms", "norm": "final norm"}.get(key, key)
        groups[key] = groups.get(key, 0) + count
    total = sum(groups.values())
    return pd.DataFrame([(k, v, v / total) for k, v in groups.items()], columns=["component", "params", "share"])


def tying_savings(config: ModelConfig) -> int:
    """Parameters saved by tying the LM head to the embedding: V * H (0 when untied)."""
    return config.vocab_size * config.hidden_size if config.tie_word_embeddings else 0


def shape_walkthrough(out: CausalLMOutput, norm_position: str, layer: int = 0, batch: int = 0) -> pd.DataFrame:
    """Step-by-step shapes of one block on the current input (like the GPT-2 tutorial's 3-token table).

    Columns: ``step`` (1-based), ``name`` (what is computed), ``formula``, ``hook`` (TransformerLens key),
    ``shape`` (e.g. "[3, 4]" = [T, H] for one sequence), ``mean_norm`` (mean L2 norm over positions).
    Step 1 is the block's input: "embedding" for the first block (``layer=0``), "block input" (the residual
    stream leaving block ``layer``, 1-based) for the others.

    Args:
        out: a :func:`run_trace` output (needs the activation record); norm_position: "pre" or "post".
    """
    c = out.activations
    p = f"blocks.{layer}."
    pre = norm_position == "pre"
    # Step 1 is what enters the block: the embedding for block 1, the previous block's output after that.
    first = ("embedding", "x = E[ids] (+ P)") if layer == 0 else ("block input", f"x = hidden_states[{layer}]")
    steps = [
        (*first, p + "hook_resid_pre"),
        ("norm 1", "n1 = Norm(x)" if pre else "(Post-Norm: no norm before attention)", p + "ln1.hook_normalized" if pre else None),
        ("attention", "a = Attn(n1)" if pre else "a = Attn(x)", p + "hook_attn_out"),
        ("residual 1", "x1 = x + a" if pre else "x1 = Norm(x + a)", p + "hook_resid_mid"),
        ("norm 2", "n2 = Norm(x1)" if pre else "(Post-Norm: no norm before the FFN)", p + "ln2.hook_normalized" if pre else None),
        ("FFN", "f = FFN(n2)" if pre else "f = FFN(x1)", p + "hook_mlp_out"),
        ("residual 2", "x2 = x1 + f" if pre else "x2 = Norm(x1 + f)", p + "hook_resid_post"),
    ]
    rows = []
    for k, (name, formula, hook) in enumerate(steps, 1):
        if hook is None:
            rows.append((k, name, formula, "", "", float("nan")))
            continue
        t = c[hook][batch]  # (T, H)
        rows.append((k, name, formula, hook, str(list(t.shape)), float(vector_norm(t).mean())))
    return pd.DataFrame(rows, columns=["step", "name", "formula", "hook", "shape", "mean_norm"])
