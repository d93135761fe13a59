"""Load released checkpoints (GPT-2, Llama, Qwen2) into :class:`engine.model.CausalLM`, and save/load our own.

What this module does:
    * :func:`config_from_hf` maps a Hugging Face ``config.json`` onto :class:`ModelConfig`, refusing (with the
      field named) anything the hand-written model cannot reproduce exactly: rope scaling, sliding windows,
      mixture-of-experts, unknown architectures.
    * :func:`load_pretrained` reads ``model.safetensors``, sharded safetensors (``model.safetensors.index.json``)
      or ``pytorch_model.bin`` (only through ``torch.load(weights_only=True)``: arbitrary pickles are refused),
      renames the tensors into our state dict, builds the model on the ``meta`` device and assigns the loaded
      tensors (``load_state_dict(assign=True)``), so loading costs about one copy of the weights.
    * :func:`save_model` writes our own format (``model.safetensors`` + ``config.json`` with
      ``"model_type": "explorer"``), which :func:`load_pretrained` reads back.
    * :func:`list_checkpoints` and :func:`resolve_checkpoint` find checkpoint folders under the models directory
      and the Hugging Face hub cache, and refuse any path outside those roots (the browser must never make the
      server read an arbitrary path).

Weight layouts (read, not copied, from the references):
    transformers ``models/gpt2/modeling_gpt2.py``: ``transformer.{wte, wpe, h.i.{ln_1, attn.c_attn, attn.c_proj,
    ln_2, mlp.c_fc, mlp.c_proj}, ln_f}`` + ``lm_head``. ``c_attn``/``c_proj``/``c_fc`` are ``Conv1D`` modules whose
    weight is stored ``[in, out]`` (transposed relative to ``nn.Linear``); ``c_attn`` packs q, k, v along ``out``.
    ``attn.bias``/``attn.masked_bias`` are causal-mask buffers, not parameters.
    transformers ``models/llama/modeling_llama.py`` and ``models/qwen2/modeling_qwen2.py``:
    ``model.{embed_tokens, layers.i.{input_layernorm, self_attn.{q,k,v,o}_proj, post_attention_layernorm,
    mlp.{gate,up,down}_proj}, norm}`` + ``lm_head``; Qwen2 has biases on q/k/v only.
    safetensors (``safetensors.safe_open``, ``safetensors.torch.save_file``): the file format; the header lists
    every tensor's dtype, shape and byte range, so a truncated file is detected before any tensor is read.

No function here downloads anything unless given a Hub id that is not a local folder, and then only through
``huggingface_hub.snapshot_download`` into the standard cache.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import torch

from .config import ModelConfig

__all__ = [
    "CheckpointError",
    "UnsupportedCheckpointError",
    "UnsafePathError",
    "CheckpointInfo",
    "SUPPORTED_ARCHITECTURES",
    "EXPLORER_MODEL_TYPE",
    "config_from_hf",
    "convert_state_dict",
    "load_pretrained",
    "save_model",
    "list_checkpoints",
    "resolve_checkpoint",
    "default_models_dir",
    "default_allowed_roots",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EXPLORER_MODEL_TYPE = "explorer"
EXPLORER_ARCHITECTURE = "ExplorerCausalLM"
CONFIG_NAME = "config.json"
SAFETENSORS_NAME = "model.safetensors"
SAFETENSORS_INDEX_NAME = "model.safetensors.index.json"
BIN_NAME = "pytorch_model.bin"

# architecture name in config.json -> our family; model_type is the fallback when "architectures" is absent.
SUPPORTED_ARCHITECTURES: dict[str, str] = {
    "GPT2LMHeadModel": "gpt2",
    "GPT2Model": "gpt2",
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    EXPLORER_ARCHITECTURE: EXPLORER_MODEL_TYPE,
}
SUPPORTED_MODEL_TYPES = ("gpt2", "llama", "qwen2", EXPLORER_MODEL_TYPE)

HUB_ALLOW_PATTERNS = [
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
]

_MOE_FIELDS = ("num_experts", "num_local_experts", "n_routed_experts", "n_shared_experts", "moe_num_experts",
               "num_experts_per_tok", "moe_intermediate_size", "use_moe")
_GPT2_ACTS = {"gelu_new": "gelu_new", "gelu_pytorch_tanh": "gelu_new", "gelu": "gelu", "relu": "relu",
              "silu": "silu", "swish": "silu"}
_LLAMA_ACTS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_new": "gelu_new",
               "gelu_pytorch_tanh": "gelu_new", "relu": "relu"}


# ---------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------


class CheckpointError(ValueError, OSError):
    """A checkpoint cannot be read: missing or corrupt file, unsafe pickle, missing/unexpected tensors, no
    network for a Hub id. The message is meant for a person and names the file or field involved."""


class UnsupportedCheckpointError(CheckpointError):
    """The ``config.json`` asks for a feature this model does not implement; the message names the field."""


class UnsafePathError(CheckpointError, PermissionError):
    """A requested checkpoint path lies outside every allowed root (``..``, absolute paths, symlink escapes)."""


# ---------------------------------------------------------------------------------------------------
# config.json -> ModelConfig
# ---------------------------------------------------------------------------------------------------


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
    supported = ", ".join(a for a in SUPPORTED_ARCHITECTURES if a != "GPT2Model")
    if archs:
        raise UnsupportedCheckpointError(
            f"config.json field 'architectures' = {archs} is not supported; supported architectures: {supported} "
            "(Llama-layout checkpoints such as SmolLM or MiniMind's Llama-format release use LlamaForCausalLM)"
        )
    if model_type in SUPPORTED_MODEL_TYPES:
        return model_type
    raise UnsupportedCheckpointError(
        f"config.json field 'model_type' = {model_type!r} is not supported; supported architectures: {supported} "
        f"(model_type one of {', '.join(SUPPORTED_MODEL_TYPES)})"
    )


def _reject_unsupported_common(cfg: dict[str, Any]) -> None:
    """Reject MoE and sliding-window attention, naming the field."""
    for field in _MOE_FIELDS:
        value = cfg.get(field)
        if value not in (None, False, 0):
            raise UnsupportedCheckpointError(
                f"config.json field '{field}' = {value!r}: mixture-of-experts layers are not supported "
                "(this explorer implements dense feed-forward blocks only)"
            )
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


def _rope_theta(cfg: dict[str, Any], default: float) -> float:
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


def _gpt2_config(cfg: dict[str, Any]) -> ModelConfig:
    for field, bad, why in (
        ("add_cross_attention", True, "cross-attention layers are not supported"),
        ("scale_attn_by_inverse_layer_idx", True, "per-layer attention scaling is not implemented"),
        ("scale_attn_weights", False, "unscaled attention scores are not implemented"),
    ):
        if cfg.get(field, not bad) == bad:
            raise UnsupportedCheckpointError(f"config.json field '{field}' = {json.dumps(bad)}: {why}")
    act = cfg.get("activation_function", "gelu_new")
    if act not in _GPT2_ACTS:
        raise UnsupportedCheckpointError(
            f"config.json field 'activation_function' = {act!r} is not supported; supported: {', '.join(_GPT2_ACTS)}"
        )
    H = cfg.get("n_embd", cfg.get("hidden_size", 768))
    inner = cfg.get("n_inner")
    return ModelConfig(
        vocab_size=cfg.get("vocab_size", 50257),
        hidden_size=H,
        num_hidden_layers=cfg.get("n_layer", cfg.get("num_hidden_layers", 12)),
        num_attention_heads=cfg.get("n_head", cfg.get("num_attention_heads", 12)),
        num_key_value_heads=None,
        intermediate_size=inner if inner is not None else 4 * H,
        hidden_act=_GPT2_ACTS[act],
        mlp_gated=False,
        norm_type="layernorm",
        norm_position="pre",
        position_embedding="learned",
        max_position_embeddings=cfg.get("n_positions", cfg.get("max_position_embeddings", 1024)),
        norm_eps=float(cfg.get("layer_norm_epsilon", 1e-5)),
        bias=True,
        attention_bias=None,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
        initializer_range=float(cfg.get("initializer_range", 0.02)),
    )


def _llama_like_config(cfg: dict[str, Any], family: str) -> ModelConfig:
    if family == "llama" and cfg.get("sliding_window") is not None and cfg.get("use_sliding_window", True):
        raise UnsupportedCheckpointError(
            f"config.json field 'sliding_window' = {cfg['sliding_window']}: sliding-window attention is not supported"
        )
    act = cfg.get("hidden_act", "silu")
    if act not in _LLAMA_ACTS:
        raise UnsupportedCheckpointError(
            f"config.json field 'hidden_act' = {act!r} is not supported; supported: {', '.join(_LLAMA_ACTS)}"
        )
    H = cfg.get("hidden_size", 4096)
    n_heads = cfg.get("num_attention_heads", 32)
    head_dim = cfg.get("head_dim")
    if head_dim is not None and n_heads and head_dim * n_heads != H:
        raise UnsupportedCheckpointError(
            f"config.json field 'head_dim' = {head_dim} differs from hidden_size / num_attention_heads = "
            f"{H} / {n_heads}; a separate head dimension is not supported"
        )
    if family == "qwen2":
        bias, attention_bias = False, True  # Qwen2Attention: q/k/v with bias, o_proj and MLP without
    else:
        attn_b, mlp_b = bool(cfg.get("attention_bias", False)), bool(cfg.get("mlp_bias", False))
        if attn_b != mlp_b:
            raise UnsupportedCheckpointError(
                f"config.json fields 'attention_bias' = {json.dumps(attn_b)} and 'mlp_bias' = {json.dumps(mlp_b)} "
                "differ; this model ties o_proj's bias to the MLP's, so both must be equal"
            )
        bias, attention_bias = attn_b, None
    return ModelConfig(
        vocab_size=cfg.get("vocab_size", 32000),
        hidden_size=H,
        num_hidden_layers=cfg.get("num_hidden_layers", 32),
        num_attention_heads=n_heads,
        num_key_value_heads=cfg.get("num_key_value_heads") or n_heads,
        intermediate_size=cfg.get("intermediate_size", 11008),
        hidden_act=_LLAMA_ACTS[act],
        mlp_gated=True,
        norm_type="rmsnorm",
        norm_position="pre",
        position_embedding="rope",
        max_position_embeddings=cfg.get("max_position_embeddings", 2048),
        rope_theta=_rope_theta(cfg, 10000.0),
        norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
        bias=bias,
        attention_bias=attention_bias,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        initializer_range=float(cfg.get("initializer_range", 0.02)),
    )


def _explorer_config(cfg: dict[str, Any]) -> ModelConfig:
    fields = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "explorer_format_version",
                                                          "torch_dtype", "dtype")}
    try:
        return ModelConfig.from_dict(fields)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"config.json (explorer format) is invalid: {exc}") from exc


def config_from_hf(config_dict: dict[str, Any]) -> ModelConfig:
    """Map a Hugging Face ``config.json`` (already parsed) onto a :class:`ModelConfig`.

    Families:
        * GPT-2 (``GPT2LMHeadModel`` / ``model_type`` gpt2): ``n_embd``, ``n_layer``, ``n_head``, ``n_inner``
          (``None`` -> 4 * n_embd), ``n_positions``, ``layer_norm_epsilon``, ``activation_function``; learned
          positions, LayerNorm, Pre-Norm, biases everywhere, tied head unless ``tie_word_embeddings`` is false.
        * Llama (``LlamaForCausalLM``; also SmolLM and MiniMind's Llama-format release): RMSNorm
          (``rms_norm_eps``), RoPE (``rope_parameters.rope_theta`` as transformers 5 writes it, or the older
          top-level ``rope_theta``), SwiGLU, grouped-query attention (``num_key_value_heads``), biases from
          ``attention_bias``/``mlp_bias`` (must agree), head untied unless ``tie_word_embeddings``.
        * Qwen2 (``Qwen2ForCausalLM``): Llama plus q/k/v biases (``attention_bias=True``, ``bias=False``).
        * Our own format (``"model_type": "explorer"``): the ModelConfig fields themselves.

    Raises:
        UnsupportedCheckpointError: (a :class:`CheckpointError`, hence ``ValueError``) naming the field for
            unknown architectures (the supported ones are listed), non-default ``rope_scaling`` /
            ``rope_parameters``, sliding windows (``use_sliding_window``, ``sliding_window``, ``layer_types``),
            mixture-of-experts fields (``num_experts``, ``num_local_experts``, ``n_routed_experts``, ...),
            a ``head_dim`` unequal to hidden_size / heads, or an unsupported activation.
        CheckpointError: values that :class:`ModelConfig` rejects (message from its validation).
    """
    family = detect_family(config_dict)
    if family == EXPLORER_MODEL_TYPE:
        return _explorer_config(config_dict)
    _reject_unsupported_common(config_dict)
    try:
        if family == "gpt2":
            if config_dict.get("rope_scaling") not in (None, {}):
                _rope_theta(config_dict, 10000.0)  # GPT-2 has no RoPE: any non-default scaling is an error
            return _gpt2_config(config_dict)
        return _llama_like_config(config_dict, family)
    except CheckpointError:
        raise
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"config.json ({family}) has invalid values: {exc}") from exc


# ---------------------------------------------------------------------------------------------------
# Tensor names: checkpoint -> our state dict
# ---------------------------------------------------------------------------------------------------

_GPT2_LAYER = re.compile(r"^h\.(\d+)\.(.+)$")
_LLAMA_LAYER = re.compile(r"^layers\.(\d+)\.(.+)$")
_GPT2_IGNORED = ("attn.bias", "attn.masked_bias")  # causal-mask buffers of older GPT2Attention
_LLAMA_LAYER_PARAMS = {
    "input_layernorm.weight", "post_attention_layernorm.weight",
    "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
    "self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias", "self_attn.o_proj.bias",
    "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
    "mlp.gate_proj.bias", "mlp.up_proj.bias", "mlp.down_proj.bias",
}


def _strip(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name


def _plan_gpt2(name: str) -> tuple[str, list[str]] | None:
    """(kind, our names) for one GPT-2 tensor name; kind 'ignore' drops it; None = unexpected."""
    n = _strip(name, "transformer.")
    simple = {"wte.weight": "embed_tokens.weight", "wpe.weight": "embed_positions.weight",
              "ln_f.weight": "norm.weight", "ln_f.bias": "norm.bias", "lm_head.weight": "lm_head.weight"}
    if n in simple:
        return "copy", [simple[n]]
    m = _GPT2_LAYER.match(n)
    if not m:
        return None
    i, rest = m.groups()
    p = f"layers.{i}."
    if rest in _GPT2_IGNORED:
        return "ignore", []
    table = {
        "ln_1.weight": ("copy", ["input_layernorm.weight"]),
        "ln_1.bias": ("copy", ["input_layernorm.bias"]),
        "ln_2.weight": ("copy", ["post_attention_layernorm.weight"]),
        "ln_2.bias": ("copy", ["post_attention_layernorm.bias"]),
        "attn.c_attn.weight": ("split_t", ["self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"]),
        "attn.c_attn.bias": ("split", ["self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"]),
        "attn.c_proj.weight": ("t", ["self_attn.o_proj.weight"]),
        "attn.c_proj.bias": ("copy", ["self_attn.o_proj.bias"]),
        "mlp.c_fc.weight": ("t", ["mlp.up_proj.weight"]),
        "mlp.c_fc.bias": ("copy", ["mlp.up_proj.bias"]),
        "mlp.c_proj.weight": ("t", ["mlp.down_proj.weight"]),
        "mlp.c_proj.bias": ("copy", ["mlp.down_proj.bias"]),
    }
    if rest not in table:
        return None
    kind, names = table[rest]
    return kind, [p + x for x in names]


def _plan_llama(name: str) -> tuple[str, list[str]] | None:
    n = _strip(_strip(name, "transformer."), "model.")
    if n in ("embed_tokens.weight", "norm.weight", "lm_head.weight"):
        return "copy", [n]
    if n.endswith("rotary_emb.inv_freq"):  # buffer saved by old transformers versions
        return "ignore", []
    m = _LLAMA_LAYER.match(n)
    if m and m.group(2) in _LLAMA_LAYER_PARAMS:
        return "copy", [n]
    return None


def _plan_explorer(name: str) -> tuple[str, list[str]] | None:
    return "copy", [name]


_PLANNERS = {"gpt2": _plan_gpt2, "llama": _plan_llama, "qwen2": _plan_llama, EXPLORER_MODEL_TYPE: _plan_explorer}


def _transform(kind: str, tensor: torch.Tensor, n_out: int) -> list[torch.Tensor]:
    """Apply a plan to one stored tensor. Conv1D weights ``[in, out]`` become Linear ``[out, in]``."""
    if kind == "copy":
        return [tensor]
    if kind == "t":
        return [tensor.t().contiguous()]
    if kind == "split_t":  # c_attn [H, 3H] -> [3H, H] -> q, k, v each [H, H]
        return [c.contiguous() for c in tensor.t().chunk(n_out, dim=0)]
    if kind == "split":  # c_attn bias [3H] -> q, k, v each [H]
        return [c.clone() for c in tensor.chunk(n_out, dim=0)]
    raise AssertionError(kind)


def _format_names(names: Iterable[str], limit: int = 20) -> str:
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def _expected_keys(model: torch.nn.Module) -> dict[str, torch.Size]:
    return {k: v.shape for k, v in model.state_dict().items()}


def convert_state_dict(
    family: str,
    config: ModelConfig,
    tensors: Iterable[tuple[str, torch.Tensor]],
    expected: dict[str, torch.Size],
    dtype: torch.dtype | None = torch.float32,
    source: str = "checkpoint",
) -> dict[str, torch.Tensor]:
    """Rename and reshape checkpoint tensors into our state dict.

    Args:
        family: "gpt2", "llama", "qwen2" or "explorer" (see :func:`detect_family`).
        config: the model's config (decides whether ``lm_head.weight`` may be absent: tied heads).
        tensors: ``(name, tensor)`` pairs as stored (consumed lazily, one tensor at a time).
        expected: our parameter names -> shapes (``model.state_dict()`` shapes).
        dtype: convert floating tensors to this dtype (``None`` keeps the stored dtype).
        source: file name used in error messages.
    Returns:
        ``{our name: tensor}``; ``lm_head.weight`` is omitted when the head is tied.
    Raises:
        CheckpointError: unexpected tensor names, missing parameters, or shape mismatches (all listed by name).
    """
    plan = _PLANNERS[family]
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
        for target, value in zip(targets, _transform(kind, tensor, len(targets))):
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
        problems.append(f"unexpected tensors: {_format_names(set(unexpected))}")
    if missing:
        problems.append(f"missing tensors: {_format_names(missing)}")
    if mismatched:
        problems.append(f"shape mismatches: {'; '.join(mismatched[:10])}")
    if problems:
        raise CheckpointError(f"{source} does not match the {family} layout of config.json: " + " | ".join(problems))
    return out


# ---------------------------------------------------------------------------------------------------
# Reading weight files
# ---------------------------------------------------------------------------------------------------


def _check_inside(path: Path, roots: list[Path] | None) -> Path:
    resolved = path.resolve()
    if roots is not None and not any(resolved.is_relative_to(r) for r in roots):
        raise UnsafePathError(f"refusing to read {path}: it resolves to {resolved}, outside the allowed folders")
    return resolved


def weight_files(folder: Path) -> list[Path]:
    """The weight files of a checkpoint folder, in the order they are read.

    Priority: ``model.safetensors``; shards listed by ``model.safetensors.index.json``; ``pytorch_model.bin``.

    Raises:
        CheckpointError: no weight file, a malformed index, or an index entry pointing outside the folder.
    """
    single = folder / SAFETENSORS_NAME
    if single.is_file():
        return [single]
    index = folder / SAFETENSORS_INDEX_NAME
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{index} is not a valid safetensors index (needs a 'weight_map'): {exc}") from exc
        files = []
        for shard in sorted(set(weight_map.values())):
            p = folder / shard
            if Path(shard).is_absolute() or ".." in Path(shard).parts or "/" in shard or "\\" in shard:
                raise UnsafePathError(f"{index} lists shard {shard!r}, which is not a file inside {folder}")
            if not p.is_file():
                raise CheckpointError(f"{index} lists shard {shard!r}, but {p} does not exist")
            files.append(p)
        return files
    binary = folder / BIN_NAME
    if binary.is_file():
        return [binary]
    others = sorted(p.name for p in folder.glob("*.safetensors")) + sorted(p.name for p in folder.glob("*.bin"))
    hint = f" (found {', '.join(others)} without an index)" if others else ""
    raise CheckpointError(
        f"no weights in {folder}: expected {SAFETENSORS_NAME}, {SAFETENSORS_INDEX_NAME} with its shards, "
        f"or {BIN_NAME}{hint}"
    )


_SAFETENSORS_DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool,
}


def _iter_safetensors(path: Path) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield ``(name, tensor)`` one at a time, in file order.

    ``safe_open`` validates the header first (a truncated file fails there, before any tensor is read). The
    bytes are then read with plain ``readinto`` into a fresh CPU tensor instead of ``get_tensor`` on the
    memory map, so the file's pages are not also counted as resident memory: peak RSS stays near one copy of
    the weights. Dtypes outside :data:`_SAFETENSORS_DTYPES` (fp8 ...) fall back to ``get_tensor``.
    """
    import struct

    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            keys = list(f.keys())
    except SafetensorError as exc:
        raise CheckpointError(
            f"{path.name} is truncated or not a valid safetensors file ({exc}); download it again"
        ) from exc
    except OSError as exc:
        raise CheckpointError(f"cannot read {path}: {exc}") from exc
    try:
        with open(path, "rb") as fh:
            (header_len,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(header_len))
            base = 8 + header_len
            entries = sorted(((k, header[k]) for k in keys), key=lambda kv: kv[1]["data_offsets"][0])
            for key, entry in entries:
                dtype = _SAFETENSORS_DTYPES.get(entry["dtype"])
                if dtype is None:
                    with safe_open(str(path), framework="pt", device="cpu") as f:
                        yield key, f.get_tensor(key)
                    continue
                begin, stop = entry["data_offsets"]
                buf = torch.empty(stop - begin, dtype=torch.uint8)  # (nbytes,)
                fh.seek(base + begin)
                got = fh.readinto(memoryview(buf.numpy())) if stop > begin else 0
                if got != stop - begin:
                    raise CheckpointError(f"{path.name} is truncated: tensor {key!r} is incomplete; download it again")
                yield key, buf.view(dtype).reshape(entry["shape"])
    except (OSError, ValueError, KeyError, struct.error) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{path.name} cannot be read as safetensors ({exc}); download it again") from exc


def _load_bin(path: Path) -> dict[str, torch.Tensor]:
    """``torch.load(weights_only=True)``: tensors and plain containers only, never arbitrary objects."""
    import pickle

    kwargs = dict(map_location="cpu", weights_only=True)
    try:
        try:
            state = torch.load(str(path), mmap=True, **kwargs)  # zip format: tensors stay in the page cache
        except RuntimeError as exc:
            if "mmap" not in str(exc).lower() and "zip" not in str(exc).lower():
                raise
            state = torch.load(str(path), **kwargs)  # legacy (non-zip) format cannot be memory-mapped
    except pickle.UnpicklingError as exc:
        raise CheckpointError(
            f"{path.name} holds Python objects other than tensors, so it is not loaded (unpickling arbitrary "
            "objects can run code). Convert it to safetensors on a machine you trust, or use a model.safetensors "
            f"release. Details: {str(exc).splitlines()[0]}"
        ) from exc
    except (RuntimeError, EOFError, OSError, ValueError) as exc:
        raise CheckpointError(f"{path.name} cannot be read as a PyTorch weights file: {exc}") from exc
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{path.name} does not hold a flat dict of tensors (a state dict)")
    return state


def _iter_tensors(files: list[Path]) -> Iterator[tuple[str, torch.Tensor]]:
    for path in files:
        if path.suffix == ".safetensors":
            yield from _iter_safetensors(path)
        else:
            state = _load_bin(path)
            for key in list(state):
                yield key, state.pop(key)


def read_config(folder: Path | str) -> dict[str, Any]:
    """Parsed ``config.json`` of a checkpoint folder.

    Raises:
        CheckpointError: the folder does not exist, has no ``config.json``, or the file is not valid JSON.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"checkpoint folder {folder} does not exist")
    path = folder / CONFIG_NAME
    if not path.is_file():
        raise CheckpointError(
            f"{folder} has no {CONFIG_NAME}: a checkpoint folder needs config.json next to its weights "
            "(the files written by save_pretrained / `huggingface-cli download`)"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from exc


# ---------------------------------------------------------------------------------------------------
# Public loading / saving
# ---------------------------------------------------------------------------------------------------


def _materialise_buffers(model: torch.nn.Module) -> None:
    """Recreate non-persistent buffers left on the meta device (sinusoidal tables)."""
    from .layers import SinusoidalPositions, sinusoidal_table

    for module in model.modules():
        if isinstance(module, SinusoidalPositions) and module.table.is_meta:
            module.table = sinusoidal_table(*module.table.shape)


def load_from_folder(
    folder: Path | str,
    dtype: torch.dtype | None = torch.float32,
    allowed_roots: Iterable[Path | str] | None = None,
):
    """Load a local checkpoint folder into a :class:`CausalLM` (see :func:`load_pretrained`).

    Raises:
        CheckpointError / UnsupportedCheckpointError / UnsafePathError: see :func:`load_pretrained`.
    """
    from .model import CausalLM

    folder = Path(folder)
    roots = [Path(r).resolve() for r in allowed_roots] if allowed_roots is not None else None
    _check_inside(folder, roots)
    if roots is not None:
        _check_inside(folder / CONFIG_NAME, roots)
    config_dict = read_config(folder)
    family = detect_family(config_dict)
    config = config_from_hf(config_dict)
    files = weight_files(folder)
    for f in files:
        _check_inside(f, roots)

    with torch.device("meta"):
        model = CausalLM(config)  # no memory: parameters are shapes only
    expected = _expected_keys(model)
    source = ", ".join(f.name for f in files)
    state = convert_state_dict(family, config, _iter_tensors(files), expected, dtype=dtype, source=f"{folder}/{source}")
    model.load_state_dict(state, strict=False, assign=True)
    del state
    if config.tie_word_embeddings:
        model.lm_head.weight = model.embed_tokens.weight  # assign=True replaced embed_tokens.weight: re-tie
    _materialise_buffers(model)
    still_meta = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
    if still_meta:
        raise CheckpointError(f"{folder}: tensors not loaded: {_format_names(still_meta)}")
    model.eval()
    return model


def _looks_like_repo_id(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?", text)) and ".." not in text


def _offline_message(repo_id: str, reason: str) -> str:
    local = repo_id.split("/")[-1]
    return (
        f"cannot fetch {repo_id!r} from the Hugging Face Hub ({reason}). To use it offline, download it on a "
        f"connected machine with `huggingface-cli download {repo_id} --local-dir models/{local}` and copy the "
        f"folder into models/ (or the folder named by EXPLORER_MODELS_DIR), then load 'models/{local}'"
    )


def download_snapshot(repo_id: str, cache_dir: str | Path | None = None, local_files_only: bool | None = None) -> Path:
    """Fetch a Hub repo's config, safetensors weights and tokenizer files into the standard cache.

    Uses ``huggingface_hub.snapshot_download`` with :data:`HUB_ALLOW_PATTERNS`; a cached snapshot is used
    without network when ``local_files_only`` (default: ``HF_HUB_OFFLINE``) is set.

    Returns:
        The snapshot folder.
    Raises:
        CheckpointError: offline / no connection / not cached / repository not found, with instructions for
            placing the folder locally.
    """
    try:
        import huggingface_hub
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - huggingface_hub is a pinned dependency
        raise CheckpointError(_offline_message(repo_id, "huggingface_hub is not installed")) from exc
    if local_files_only is None:
        local_files_only = bool(huggingface_hub.constants.HF_HUB_OFFLINE)
    try:
        path = snapshot_download(repo_id, cache_dir=cache_dir, allow_patterns=HUB_ALLOW_PATTERNS,
                                 local_files_only=local_files_only)
    except Exception as exc:  # LocalEntryNotFoundError, connection errors, RepositoryNotFoundError, ...
        name = type(exc).__name__
        if name == "RepositoryNotFoundError":
            reason = "no such repository, or it is private"
        elif name in ("LocalEntryNotFoundError", "OfflineModeIsEnabled") or local_files_only:
            reason = "offline and not in the local cache"
        else:
            reason = f"{name}: {str(exc).splitlines()[0] if str(exc) else 'connection failed'}"
        raise CheckpointError(_offline_message(repo_id, reason)) from exc
    return Path(path)


def load_pretrained(
    path_or_repo_id: str | os.PathLike,
    dtype: torch.dtype | None = torch.float32,
    allowed_roots: Iterable[Path | str] | None = None,
    cache_dir: str | Path | None = None,
    local_files_only: bool | None = None,
    progress=None,
):
    """Load a GPT-2 / Llama / Qwen2 checkpoint or our own saved model into :class:`engine.model.CausalLM`.

    Args:
        path_or_repo_id: a local folder holding ``config.json`` and weights, or a Hub id (``"gpt2"``,
            ``"HuggingFaceTB/SmolLM-135M"``) fetched through :func:`download_snapshot` when no such folder exists,
            or the name of a model shipped as a GGUF file in a pip package (``"smollm2-135m"``, see
            :mod:`engine.checkpoints_gguf`), converted once into a cache folder.
        progress: ``progress(done, total, stage)`` during a first GGUF conversion (ignored otherwise).
        dtype: dtype of the loaded parameters (default float32; ``None`` keeps the stored dtype).
        allowed_roots: if given, every file read must resolve inside one of these folders
            (:class:`UnsafePathError` otherwise); Hub downloads are not attempted in that mode.
        cache_dir, local_files_only: passed to ``snapshot_download`` for Hub ids.
    Returns:
        A ``CausalLM`` in eval mode. With a tied head ``model.lm_head.weight is model.embed_tokens.weight``.
        Peak extra memory is about one copy of the weights (model built on the meta device, tensors assigned).
    Raises:
        CheckpointError: folder without ``config.json``; no weight file; truncated/corrupt safetensors; a
            ``pytorch_model.bin`` holding arbitrary pickled objects (never unpickled); missing or unexpected
            tensors (listed by name; ``attn.bias``/``attn.masked_bias`` buffers are ignored, a ``transformer.``
            or ``model.`` prefix is optional, ``lm_head.weight`` may be absent when tied); shape mismatches; a
            Hub id that cannot be fetched (offline: the message says how to place the folder in ``models/``).
        UnsupportedCheckpointError: see :func:`config_from_hf`.
    """
    text = os.fspath(path_or_repo_id)
    folder = Path(text).expanduser()
    if not folder.exists():
        from .checkpoints_gguf import is_named_gguf_model, load_named_model

        if is_named_gguf_model(text):  # "smollm2-135m": a GGUF file shipped in a pip package, converted once
            return load_named_model(text, progress=progress, dtype=dtype)
    if folder.is_dir():
        return load_from_folder(folder, dtype=dtype, allowed_roots=allowed_roots)
    if folder.is_file():
        raise CheckpointError(f"{folder} is a file; pass the folder that holds config.json and the weights")
    first = Path(text).parts[0] if Path(text).parts else ""
    if allowed_roots is not None or not _looks_like_repo_id(text) or ("/" in text and Path(first).is_dir()):
        raise CheckpointError(f"checkpoint folder {text} does not exist")  # a local path, not a Hub id
    snapshot = download_snapshot(text, cache_dir=cache_dir, local_files_only=local_files_only)
    return load_from_folder(snapshot, dtype=dtype)


def save_model(model, folder: str | Path) -> Path:
    """Save a :class:`CausalLM` in our own format: ``model.safetensors`` + ``config.json``.

    ``config.json`` holds the ModelConfig fields plus ``"model_type": "explorer"`` and
    ``"architectures": ["ExplorerCausalLM"]``. A tied ``lm_head.weight`` is not written (the tie is rebuilt on
    load), so the file holds each tensor once.

    Args:
        model: the model (any device; tensors are copied to CPU).
        folder: created if needed; existing files of the same names are overwritten.
    Returns:
        The folder path.
    """
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config: ModelConfig = model.config
    tied = model.lm_head.weight is model.embed_tokens.weight
    state = {}
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight" and tied:
            continue
        state[name] = tensor.detach().to("cpu").contiguous()
    save_file(state, str(folder / SAFETENSORS_NAME), metadata={"format": "pt", "model_type": EXPLORER_MODEL_TYPE})
    payload = {"model_type": EXPLORER_MODEL_TYPE, "architectures": [EXPLORER_ARCHITECTURE],
               "explorer_format_version": 1, **config.to_dict()}
    payload["tie_word_embeddings"] = bool(tied)  # what the file holds: no lm_head.weight when tied
    (folder / CONFIG_NAME).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


# ---------------------------------------------------------------------------------------------------
# Discovery and path containment
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint folder found by :func:`list_checkpoints`.

    Fields:
        name: display / lookup name: path relative to the models dir, or the Hub repo id for cache snapshots.
        path: absolute folder path.
        family: "gpt2", "llama", "qwen2", "explorer", or "unsupported".
        architecture: first entry of ``architectures`` (or ``model_type``).
        size_bytes: total size of the files in the folder (symlinks followed, as in the Hub cache).
        source: "local" or "hub".
        supported: whether :func:`config_from_hf` accepts the config.
        problem: the reason when not supported (the error message), else "".
    """

    name: str
    path: Path
    family: str
    architecture: str
    size_bytes: int
    source: str
    supported: bool = True
    problem: str = ""


def default_models_dir() -> Path:
    """``$EXPLORER_MODELS_DIR`` if set, else ``models/`` in the project root."""
    env = os.environ.get("EXPLORER_MODELS_DIR")
    return Path(env).expanduser() if env else PROJECT_ROOT / "models"


def _hub_cache_dir() -> Path | None:
    try:
        from huggingface_hub import constants

        return Path(constants.HF_HUB_CACHE)
    except Exception:  # pragma: no cover
        return None


def default_allowed_roots(models_dir: str | Path | None = None, include_hub_cache: bool = True) -> list[Path]:
    """Folders a checkpoint may be read from: the models directory and (optionally) the Hub cache."""
    roots = [Path(models_dir) if models_dir is not None else default_models_dir()]
    hub = _hub_cache_dir() if include_hub_cache else None
    if hub is not None:
        roots.append(hub)
    return roots


def _folder_size(folder: Path) -> int:
    total = 0
    for p in folder.iterdir():
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def _info(name: str, folder: Path, source: str) -> CheckpointInfo:
    try:
        cfg = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return CheckpointInfo(name, folder, "unsupported", "?", _folder_size(folder), source, False,
                              f"config.json unreadable: {exc}")
    archs = cfg.get("architectures") if isinstance(cfg, dict) else None
    arch = (archs[0] if isinstance(archs, list) and archs else None) or (cfg.get("model_type") if isinstance(cfg, dict) else None) or "?"
    try:
        family = detect_family(cfg)
        config_from_hf(cfg)
        return CheckpointInfo(name, folder, family, str(arch), _folder_size(folder), source)
    except CheckpointError as exc:
        return CheckpointInfo(name, folder, "unsupported", str(arch), _folder_size(folder), source, False, str(exc))


def list_checkpoints(models_dir: str | Path | None = None, include_hub_cache: bool = True,
                     max_depth: int = 3, hub_cache_dir: str | Path | None = None) -> list[CheckpointInfo]:
    """Checkpoint folders (those holding ``config.json``) under the models directory and in the Hub cache.

    Args:
        models_dir: defaults to :func:`default_models_dir` (``$EXPLORER_MODELS_DIR`` or ``<project>/models``).
        include_hub_cache: also list snapshots from ``huggingface_hub.scan_cache_dir()`` (errors ignored).
        hub_cache_dir: the Hub cache to scan; default ``huggingface_hub.constants.HF_HUB_CACHE``.
        max_depth: how deep below ``models_dir`` to look (``models/gpt2`` is depth 1, ``models/org/name`` 2).
    Returns:
        Local entries sorted by name, then Hub snapshots sorted by repo id. Folders whose symlinks resolve
        outside the models directory are skipped. Unsupported configs are listed with ``supported=False``.
    """
    root = Path(models_dir) if models_dir is not None else default_models_dir()
    found: list[CheckpointInfo] = []
    if root.is_dir():
        root_resolved = root.resolve()
        stack = [(root, 0)]
        while stack:
            folder, depth = stack.pop()
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            if (folder / CONFIG_NAME).is_file() and folder != root:
                if folder.resolve().is_relative_to(root_resolved):
                    found.append(_info(folder.relative_to(root).as_posix(), folder.resolve(), "local"))
                continue
            if depth < max_depth:
                stack.extend((c, depth + 1) for c in children if c.is_dir() and not c.name.startswith("."))
        found.sort(key=lambda i: i.name)
    if include_hub_cache:
        try:
            from huggingface_hub import scan_cache_dir

            hub: list[CheckpointInfo] = []
            cache = Path(hub_cache_dir) if hub_cache_dir is not None else _hub_cache_dir()
            for repo in scan_cache_dir(cache).repos:
                if repo.repo_type != "model":
                    continue
                for rev in sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True):
                    snap = Path(rev.snapshot_path)
                    if (snap / CONFIG_NAME).is_file():
                        hub.append(_info(repo.repo_id, snap, "hub"))
                        break  # newest revision only
            found.extend(sorted(hub, key=lambda i: i.name))
        except Exception:
            pass  # no cache, unreadable cache: nothing to add
    return found


def resolve_checkpoint(name_or_path: str | os.PathLike, allowed_roots: Iterable[str | Path] | None = None) -> Path:
    """Resolve a checkpoint name (as listed by :func:`list_checkpoints`) or path to a folder inside a root.

    Args:
        name_or_path: a path relative to one of the roots (``"gpt2"``, ``"org/model"``), an absolute path inside
            a root, or a Hub repo id present in the cache (``"openai-community/gpt2"``).
        allowed_roots: folders the result must lie in; default :func:`default_allowed_roots` (models dir + Hub cache).
    Returns:
        The resolved (symlink-free) folder, which holds ``config.json``.
    Raises:
        UnsafePathError: the path resolves outside every root (``..`` segments, absolute paths elsewhere,
            symlinks pointing out of the root).
        CheckpointError: nothing with that name inside the roots, or the folder has no ``config.json``.
    """
    roots_in = list(allowed_roots) if allowed_roots is not None else default_allowed_roots()
    roots = [Path(r).expanduser().resolve() for r in roots_in]
    text = os.fspath(name_or_path)
    if not text or "\x00" in text:
        raise CheckpointError("empty or invalid checkpoint name")
    raw = Path(text).expanduser()
    candidates = [raw] if raw.is_absolute() else [Path(r) / raw for r in roots_in]
    outside: list[Path] = []
    for cand in candidates:
        resolved = cand.resolve()
        if not any(resolved.is_relative_to(r) for r in roots):
            outside.append(resolved)
            continue
        if resolved.is_dir() and (resolved / CONFIG_NAME).is_file():
            if not any((resolved / CONFIG_NAME).resolve().is_relative_to(r) for r in roots):
                raise UnsafePathError(f"refusing {text!r}: its config.json links outside the allowed folders")
            return resolved
    if outside and len(outside) == len(candidates):
        raise UnsafePathError(
            f"refusing {text!r}: it resolves outside the allowed folders ({', '.join(str(r) for r in roots)})"
        )
    # Hub repo ids live in a Hub cache root as models--org--name/snapshots/<rev> (newest revision first).
    if _looks_like_repo_id(text):
        for root in roots:
            snaps = root / ("models--" + text.replace("/", "--")) / "snapshots"
            if not snaps.is_dir():
                continue
            for snap in sorted(snaps.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True):
                resolved = snap.resolve()
                if any(resolved.is_relative_to(r) for r in roots) and (resolved / CONFIG_NAME).is_file():
                    return resolved
    raise CheckpointError(
        f"no checkpoint named {text!r} in {', '.join(str(r) for r in roots)} (a checkpoint is a folder with config.json)"
    )
