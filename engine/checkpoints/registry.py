"""The one list of checkpoint families, and what is done with it: pick a family, map its config, rename its tensors.

Adding a family: write ``<family>.py`` with a ``config`` mapping, a ``plan`` for tensor names and a ``FAMILY``
(see :mod:`engine.checkpoints.family`), then add it to the import and to :data:`FAMILIES` below.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

from ..config import ModelConfig
from ..model import CausalLM
from . import explorer, gemma2, gemma3, gpt2, gpt_oss, llama, mistral, mixtral, olmo2, qwen2, qwen3, qwen3_moe
from .errors import CheckpointError, UnsupportedCheckpointError
from .family import TRANSFORMS, Family, expand_targets, reject_unsupported_common

FAMILIES: dict[str, Family] = {f.name: f for f in (gpt2.FAMILY, llama.FAMILY, qwen2.FAMILY, qwen3.FAMILY, mistral.FAMILY,
                                                   olmo2.FAMILY, gemma2.FAMILY, gemma3.FAMILY, mixtral.FAMILY,
                                                   qwen3_moe.FAMILY, qwen3_moe.QWEN2_MOE, gpt_oss.FAMILY,
                                                   explorer.FAMILY)}

#: ``architectures`` entry in config.json -> family name; ``model_type`` is the fallback when it is absent.
SUPPORTED_ARCHITECTURES: dict[str, str] = {a: f.name for f in FAMILIES.values() for a in f.architectures}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(t for f in FAMILIES.values() for t in f.model_types)


def detect_family(config_dict: dict[str, Any]) -> str:
    """Family of a ``config.json``: ``"gpt2"``, ``"llama"``, ``"qwen2"`` or ``"explorer"`` (our own format).

    ``architectures`` decides when present (any supported entry wins); otherwise ``model_type``.

    Raises:
        UnsupportedCheckpointError: neither field names a supported architecture (the supported ones are listed).
    """
    if not isinstance(config_dict, dict):
        raise CheckpointError(f"config.json must hold a JSON object, got {type(config_dict).__name__}")
    archs = config_dict.get("architectures") or []
    if isinstance(archs, str):
        archs = [archs]
    for arch in archs:
        if arch in SUPPORTED_ARCHITECTURES:
            return SUPPORTED_ARCHITECTURES[arch]
    model_type = config_dict.get("model_type")
    supported = ", ".join(f.architectures[0] for f in FAMILIES.values())
    if archs:
        raise UnsupportedCheckpointError(
            f"config.json field 'architectures' = {archs} is not supported; supported architectures: {supported} "
            "(Llama-layout checkpoints such as SmolLM or MiniMind's Llama-format release use LlamaForCausalLM)"
        )
    if model_type in SUPPORTED_MODEL_TYPES:
        return next(f.name for f in FAMILIES.values() if model_type in f.model_types)
    raise UnsupportedCheckpointError(
        f"config.json field 'model_type' = {model_type!r} is not supported; supported architectures: {supported} "
        f"(model_type one of {', '.join(SUPPORTED_MODEL_TYPES)})"
    )


def config_from_hf(config_dict: dict[str, Any]) -> ModelConfig:
    """Map a Hugging Face ``config.json`` (already parsed) onto a :class:`ModelConfig` through its family's ``config``
    (the family modules document their fields).

    Raises:
        UnsupportedCheckpointError: (a :class:`CheckpointError`, hence ``ValueError``) naming the field for
            unknown architectures (the supported ones are listed), non-default ``rope_scaling`` /
            ``rope_parameters``, sliding windows (``use_sliding_window``, ``sliding_window``, ``layer_types``),
            mixture-of-experts fields (``num_experts``, ``num_local_experts``, ``n_routed_experts``, ...),
            a ``head_dim`` unequal to hidden_size / heads, or an unsupported activation.
        CheckpointError: values that :class:`ModelConfig` rejects (message from its validation).
    """
    family = FAMILIES[detect_family(config_dict)]
    if family.check_common:
        reject_unsupported_common(config_dict)
    try:
        return family.config(config_dict)
    except CheckpointError:
        raise
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"config.json ({family.name}) has invalid values: {exc}") from exc


def format_names(names: Iterable[str], limit: int = 20) -> str:
    """Sorted, comma-separated, at most ``limit`` names then a count: for error messages."""
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def expected_shapes(config: ModelConfig) -> dict[str, torch.Size]:
    """Our parameter names -> shapes for ``config``, from a model built on the meta device (no memory)."""
    with torch.device("meta"):
        return {k: v.shape for k, v in CausalLM(config).state_dict().items()}


def convert_state_dict(
    family: str,
    config: ModelConfig,
    tensors: Iterable[tuple[str, torch.Tensor]],
    expected: dict[str, torch.Size] | None = None,
    dtype: torch.dtype | None = torch.float32,
    source: str = "checkpoint",
) -> dict[str, torch.Tensor]:
    """Rename and reshape checkpoint tensors into our state dict (the one weight mapping the loader, the tests and
    the benchmarks use: ``convert_state_dict("gpt2", config, hf_model.state_dict().items())``).

    Args:
        family: a key of :data:`FAMILIES` (see :func:`detect_family`).
        config: the model's config (decides whether ``lm_head.weight`` may be absent: tied heads).
        tensors: ``(name, tensor)`` pairs as stored (consumed lazily, one tensor at a time).
        expected: our parameter names -> shapes; default :func:`expected_shapes` of ``config``.
        dtype: convert floating tensors to this dtype (``None`` keeps the stored dtype).
        source: file name used in error messages.
    Returns:
        ``{our name: tensor}``; ``lm_head.weight`` is omitted when the head is tied.
    Raises:
        CheckpointError: unexpected tensor names, missing parameters, or shape mismatches (all listed by name).
    """
    plan = FAMILIES[family].plan
    expected = expected_shapes(config) if expected is None else expected
    out: dict[str, torch.Tensor] = {}
    unexpected: list[str] = []
    mismatched: list[str] = []
    for name, tensor in tensors:
        step = plan(name)
        if step is None:
            unexpected.append(name)
            continue
        kind, targets = step
        if kind == "ignore":
            continue
        if targets == ["lm_head.weight"] and config.tie_word_embeddings:
            continue  # the tie reuses embed_tokens.weight (transformers ignores a stored copy the same way)
        if kind == "split_t" and tensor.dim() == 2 and tensor.shape[1] != 3 * config.hidden_size:
            mismatched.append(f"{name} {tuple(tensor.shape)} (Conv1D weight must be [H, 3H] = "
                              f"[{config.hidden_size}, {3 * config.hidden_size}])")
            continue
        values = TRANSFORMS[kind](tensor, len(targets))
        for target, value in zip(expand_targets(targets, len(values)), values):
            if target not in expected:
                unexpected.append(name)
                break
            if tuple(value.shape) != tuple(expected[target]):
                mismatched.append(f"{name} -> {target}: stored {tuple(value.shape)}, expected {tuple(expected[target])}")
                continue
            if dtype is not None and value.is_floating_point() and value.dtype != dtype:
                value = value.to(dtype)
            out[target] = value
    required = set(expected) - ({"lm_head.weight"} if config.tie_word_embeddings else set())
    missing = required - set(out)
    problems = []
    if unexpected:
        problems.append(f"unexpected tensors: {format_names(set(unexpected))}")
    if missing:
        problems.append(f"missing tensors: {format_names(missing)}")
    if mismatched:
        problems.append(f"shape mismatches: {'; '.join(mismatched[:10])}")
    if problems:
        raise CheckpointError(f"{source} does not match the {family} layout of config.json: " + " | ".join(problems))
    return out
