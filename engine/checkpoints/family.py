"""What a checkpoint family is, and the ``config.json`` checks that several families share.

A family (:class:`Family`) is two mappings:

    * ``config``: a parsed Hugging Face ``config.json`` -> :class:`engine.config.ModelConfig`, refusing (with the
      field named) anything the hand-written model cannot reproduce exactly;
    * ``plan``: one stored tensor name -> ``(kind, our parameter names)``, where ``kind`` says how the stored tensor
      becomes ours (:data:`TRANSFORMS`); ``None`` means the name is unexpected, kind ``"ignore"`` drops it.

Each family lives in its own module (``gpt2.py``, ``llama.py`` ...) and is listed once in ``registry.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError

#: ``(kind, our names)`` for one stored tensor; kind is a key of :data:`TRANSFORMS` or ``"ignore"``.
Plan = Optional[tuple[str, list[str]]]


@dataclass(frozen=True)
class Family:
    """One checkpoint family.

    Fields:
        name: ``"gpt2"``, ``"llama"`` ... (what :class:`engine.checkpoints.CheckpointInfo` shows).
        architectures: ``config.json`` ``architectures`` entries that select this family.
        model_types: ``config.json`` ``model_type`` values that select it when ``architectures`` is absent.
        config: ``config.json`` dict -> :class:`ModelConfig` (raises :class:`UnsupportedCheckpointError`).
        plan: stored tensor name -> :data:`Plan`.
        check_common: apply :func:`reject_unsupported_common` (MoE, sliding windows) before ``config``.
    """

    name: str
    architectures: tuple[str, ...]
    model_types: tuple[str, ...]
    config: Callable[[dict[str, Any]], ModelConfig]
    plan: Callable[[str], Plan]
    check_common: bool = True


def strip_prefix(name: str, *prefixes: str) -> str:
    """``name`` without each of ``prefixes`` in turn (``transformer.``, ``model.``: optional in stored names)."""
    for prefix in prefixes:
        name = name.removeprefix(prefix)
    return name


# How a stored tensor becomes ours. GPT-2's Conv1D weights are stored [in, out]; nn.Linear wants [out, in].
TRANSFORMS: dict[str, Callable[[torch.Tensor, int], list[torch.Tensor]]] = {
    "copy": lambda t, n: [t],
    "t": lambda t, n: [t.t().contiguous()],  # Conv1D [in, out] -> Linear [out, in]
    "split_t": lambda t, n: [c.contiguous() for c in t.t().chunk(n, dim=0)],  # c_attn [H, 3H] -> q, k, v [H, H]
    "split": lambda t, n: [c.clone() for c in t.chunk(n, dim=0)],  # c_attn bias [3H] -> q, k, v [H]
    # gpt-oss stores all experts of a layer in one tensor, gate and up interleaved (columns 0, 2, 4 ... are the gate):
    "experts_gate_up": lambda t, n: [w[:, j::2].t().contiguous() for w in t for j in (0, 1)],  # [E, H, 2I] -> [I, H]s
    "experts_gate_up_bias": lambda t, n: [b[j::2].clone() for b in t for j in (0, 1)],  # [E, 2I] -> [I]s
    "experts_down": lambda t, n: [w.t().contiguous() for w in t],  # [E, I, H] -> E x [H, I]
    "experts_rows": lambda t, n: [r.clone() for r in t],  # [E, H] -> E x [H]
}


def expand_targets(targets: list[str], count: int) -> list[str]:
    """Targets holding ``{e}`` (one per expert) repeated for experts 0, 1, ... until ``count`` names are listed."""
    if not any("{e}" in t for t in targets):
        return targets
    return [t.format(e=e) for e in range(count // len(targets)) for t in targets]

_MOE_FIELDS = ("num_experts", "num_local_experts", "n_routed_experts", "n_shared_experts", "moe_num_experts",
               "num_experts_per_tok", "moe_intermediate_size", "use_moe")


def reject_unsupported_common(cfg: dict[str, Any]) -> None:
    """Reject mixture-of-experts and sliding-window attention, naming the field (families without either)."""
    reject_moe(cfg)
    reject_sliding(cfg)


def reject_moe(cfg: dict[str, Any]) -> None:
    """Reject mixture-of-experts fields, naming the field."""
    for field in _MOE_FIELDS:
        value = cfg.get(field)
        if value not in (None, False, 0):
            raise UnsupportedCheckpointError(
                f"config.json field '{field}' = {value!r}: mixture-of-experts layers are not supported "
                "(this explorer implements dense feed-forward blocks only)"
            )


def reject_sliding(cfg: dict[str, Any]) -> None:
    """Reject sliding-window attention (``use_sliding_window``, non-full ``layer_types``), naming the field."""
    if cfg.get("use_sliding_window"):
        raise UnsupportedCheckpointError(
            "config.json field 'use_sliding_window' = true: sliding-window attention is not supported "
            "(only full causal attention is implemented)"
        )
    layer_types = cfg.get("layer_types")
    if layer_types and any(t != "full_attention" for t in layer_types):
        raise UnsupportedCheckpointError(
            f"config.json field 'layer_types' contains {sorted(set(layer_types) - {'full_attention'})}: "
            "only 'full_attention' layers are supported"
        )


def sliding_layout(cfg: dict[str, Any], flag: bool = False) -> dict[str, Any]:
    """``sliding_window`` and ``layer_types`` for :class:`ModelConfig` from a ``config.json`` that has them.

    ``flag``: the window counts only when ``use_sliding_window`` is true (Qwen2/Qwen3 files carry a window value
    they do not use). Without a window every layer is full attention; without ``layer_types`` every layer slides
    (Mistral). A window no layer uses is dropped.
    """
    window = cfg.get("sliding_window")
    if flag and not cfg.get("use_sliding_window", False):
        window = None
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        layer_types = tuple(layer_types)
        if window is not None and "sliding_attention" not in layer_types:
            window = None
    if window is None and layer_types is not None and "sliding_attention" not in layer_types:
        layer_types = None
    return {"sliding_window": window, "layer_types": layer_types}


def rope_theta(cfg: dict[str, Any], default: float) -> float:
    """RoPE base from ``rope_parameters`` (transformers >= 5) or ``rope_theta``/``rope_scaling`` (older files).

    Raises:
        UnsupportedCheckpointError: any non-default rope type (linear, dynamic, yarn, llama3, ...) or a partial
            rotary factor; the message names ``rope_scaling`` or ``rope_parameters``.
    """
    theta = cfg.get("rope_theta")
    for field in ("rope_scaling", "rope_parameters"):
        params = cfg.get(field)
        if params is None:
            continue
        if not isinstance(params, dict):
            raise UnsupportedCheckpointError(f"config.json field '{field}' = {params!r} is not understood")
        if params and all(isinstance(v, dict) for v in params.values()):  # per-layer-type parameters
            raise UnsupportedCheckpointError(
                f"config.json field '{field}' holds per-layer-type RoPE parameters ({', '.join(params)}); "
                "only a single default RoPE is supported"
            )
        rope_type = params.get("rope_type", params.get("type", "default"))
        if rope_type not in (None, "default"):
            raise UnsupportedCheckpointError(
                f"config.json field '{field}' asks for rope_type={rope_type!r}: RoPE scaling is not supported "
                "(only the default rotary embedding is implemented)"
            )
        factor = params.get("partial_rotary_factor", 1.0)
        if factor not in (None, 1, 1.0):
            raise UnsupportedCheckpointError(
                f"config.json field '{field}' sets partial_rotary_factor={factor}: partial RoPE is not supported"
            )
        if params.get("rope_theta") is not None:
            theta = params["rope_theta"]
    if cfg.get("partial_rotary_factor") not in (None, 1, 1.0):
        raise UnsupportedCheckpointError(
            f"config.json field 'partial_rotary_factor' = {cfg['partial_rotary_factor']}: partial RoPE is not supported"
        )
    return float(theta if theta is not None else default)
