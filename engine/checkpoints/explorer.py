"""Our own format: ``model.safetensors`` with our parameter names + ``config.json`` holding the ModelConfig fields
and ``"model_type": "explorer"`` (written by :func:`save_model`, i.e. ``CausalLM.save_pretrained``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import ModelConfig
from .errors import CheckpointError
from .family import Family, Plan
from .io import CONFIG_NAME, SAFETENSORS_NAME

EXPLORER_MODEL_TYPE = "explorer"
EXPLORER_ARCHITECTURE = "ExplorerCausalLM"
_NOT_CONFIG = ("model_type", "architectures", "explorer_format_version", "torch_dtype", "dtype")


def config(cfg: dict[str, Any]) -> ModelConfig:
    """The ModelConfig fields themselves (validated by :class:`ModelConfig`)."""
    try:
        return ModelConfig.from_dict({k: v for k, v in cfg.items() if k not in _NOT_CONFIG})
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"config.json (explorer format) is invalid: {exc}") from exc


def plan(name: str) -> Plan:
    """Every stored name is ours."""
    return "copy", [name]


FAMILY = Family(EXPLORER_MODEL_TYPE, architectures=(EXPLORER_ARCHITECTURE,), model_types=(EXPLORER_MODEL_TYPE,),
                config=config, plan=plan, check_common=False)


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
    tied = model.lm_head.weight is model.embed_tokens.weight
    state = {}
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight" and tied:
            continue
        state[name] = tensor.detach().to("cpu").contiguous()
    # One metadata key: safetensors writes the metadata map in hash order, so with two keys the same weights could
    # give different bytes from one save to the next (config.json already says model_type).
    save_file(state, str(folder / SAFETENSORS_NAME), metadata={"format": "pt"})
    payload = {"model_type": EXPLORER_MODEL_TYPE, "architectures": [EXPLORER_ARCHITECTURE],
               "explorer_format_version": 1, **model.config.to_dict()}
    payload["tie_word_embeddings"] = bool(tied)  # what the file holds: no lm_head.weight when tied
    (folder / CONFIG_NAME).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder
