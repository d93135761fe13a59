"""Loading a checkpoint into :class:`engine.model.CausalLM`: a local folder, a Hub id, or a named packaged model.

The model is built on the ``meta`` device (parameters are shapes only, no initialisation runs: see
:class:`engine.layers.Linear`), and the renamed tensors are assigned (``load_state_dict(assign=True)``). A safetensors
tensor stored under our layout and dtype is assigned as a view of the file's memory map (nothing is copied; its
pages are the page cache's, shared by every process that loads the file); one the family reshapes (GPT-2's
Conv1D transposes, the fused q/k/v) or converts to another dtype is read once into fresh memory and converted.
So a load costs at most about one copy of the weights, and none for a file already in our layout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import torch

from ..layers import SinusoidalPositions, sinusoidal_table
from ..model import CausalLM
from . import smollm2
from .discovery import check_inside
from .errors import CheckpointError
from .hub import download_snapshot, looks_like_repo_id
from .io import CONFIG_NAME, iter_tensors, read_config, weight_files
from .registry import FAMILIES, config_from_hf, convert_state_dict, detect_family, format_names


def _map_rule(family: str, dtype: torch.dtype | None):
    """Which stored tensors stay views of the memory map: the ones assigned unchanged (same name kind, same dtype)."""
    plan = FAMILIES[family].plan

    def mapped(name: str, stored: torch.dtype) -> bool:
        step = plan(name)
        return step is not None and step[0] == "copy" and (dtype is None or stored == dtype or not stored.is_floating_point)

    return mapped


def _materialise_buffers(model: torch.nn.Module) -> None:
    """Recreate non-persistent buffers left on the meta device (sinusoidal tables)."""
    for module in model.modules():
        if isinstance(module, SinusoidalPositions) and module.table.is_meta:
            module.table = sinusoidal_table(*module.table.shape)


def load_from_folder(
    folder: Path | str,
    dtype: torch.dtype | None = torch.float32,
    allowed_roots: Iterable[Path | str] | None = None,
) -> CausalLM:
    """Load a local checkpoint folder into a :class:`CausalLM` (see :func:`load_pretrained`).

    Raises:
        CheckpointError / UnsupportedCheckpointError / UnsafePathError: see :func:`load_pretrained`.
    """
    folder = Path(folder)
    roots = [Path(r).resolve() for r in allowed_roots] if allowed_roots is not None else None
    check_inside(folder, roots)
    if roots is not None:
        check_inside(folder / CONFIG_NAME, roots)
    config_dict = read_config(folder)
    family = detect_family(config_dict)
    config = config_from_hf(config_dict)
    files = weight_files(folder)
    for f in files:
        check_inside(f, roots)

    with torch.device("meta"):
        model = CausalLM(config)  # no memory: parameters are shapes only
    expected = {k: v.shape for k, v in model.state_dict().items()}
    source = ", ".join(f.name for f in files)
    tensors = iter_tensors(files, mapped=_map_rule(family, dtype))
    state = convert_state_dict(family, config, tensors, expected, dtype=dtype, source=f"{folder}/{source}")
    model.load_state_dict(state, strict=False, assign=True)
    del state
    if config.tie_word_embeddings:
        model.lm_head.weight = model.embed_tokens.weight  # assign=True replaced embed_tokens.weight: re-tie
    _materialise_buffers(model)
    still_meta = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
    if still_meta:
        raise CheckpointError(f"{folder}: tensors not loaded: {format_names(still_meta)}")
    model.eval()
    return model


def load_named_model(name: str = "smollm2-135m", progress: smollm2.ProgressCallback | None = None,
                     dtype: torch.dtype | None = torch.float32, cache_root: str | Path | None = None) -> CausalLM:
    """``CausalLM`` of a named packaged GGUF model, from the verified cache (converted on first use).

    See :func:`engine.checkpoints.smollm2.ensure_converted` for the cache and the errors.
    """
    folder = smollm2.ensure_converted(name, progress=progress, cache_root=cache_root)
    model = load_from_folder(folder, dtype=dtype)
    spec = smollm2.GGUF_MODELS[name.lower()]
    if model.num_parameters() != spec.num_parameters:
        raise CheckpointError(f"{spec.title}: converted model has {model.num_parameters():,} parameters, "
                              f"expected {spec.num_parameters:,}")
    return model


def load_pretrained(
    path_or_repo_id: str | os.PathLike,
    dtype: torch.dtype | None = torch.float32,
    allowed_roots: Iterable[Path | str] | None = None,
    cache_dir: str | Path | None = None,
    local_files_only: bool | None = None,
    progress=None,
) -> CausalLM:
    """Load a GPT-2 / Llama / Qwen2 checkpoint or our own saved model into :class:`engine.model.CausalLM`.

    Args:
        path_or_repo_id: a local folder holding ``config.json`` and weights, or a Hub id (``"gpt2"``,
            ``"HuggingFaceTB/SmolLM-135M"``) fetched through :func:`download_snapshot` when no such folder exists,
            or the name of a model shipped as a GGUF file in a pip package (``"smollm2-135m"``, see
            :mod:`engine.checkpoints.smollm2`), converted once into a cache folder.
        dtype: dtype of the loaded parameters (default float32; ``None`` keeps the stored dtype).
        allowed_roots: if given, every file read must resolve inside one of these folders
            (:class:`UnsafePathError` otherwise); Hub downloads are not attempted in that mode.
        cache_dir, local_files_only: passed to ``snapshot_download`` for Hub ids.
        progress: ``progress(done, total, stage)`` during a first GGUF conversion (ignored otherwise).
    Returns:
        A ``CausalLM`` in eval mode. With a tied head ``model.lm_head.weight is model.embed_tokens.weight``.
        Peak extra memory is about one copy of the weights (model built on the meta device, tensors assigned).
    Raises:
        CheckpointError: folder without ``config.json``; no weight file; truncated/corrupt safetensors; a
            ``pytorch_model.bin`` holding arbitrary pickled objects (never unpickled); missing or unexpected
            tensors (listed by name; ``attn.bias``/``attn.masked_bias`` buffers are ignored, a ``transformer.``
            or ``model.`` prefix is optional, ``lm_head.weight`` may be absent when tied); shape mismatches; a
            Hub id that cannot be fetched (offline: the message says how to place the folder in ``models/``).
        UnsupportedCheckpointError: see :func:`engine.checkpoints.config_from_hf`.
    """
    text = os.fspath(path_or_repo_id)
    folder = Path(text).expanduser()
    if not folder.exists() and smollm2.is_named_gguf_model(text):  # a GGUF file in a pip package, converted once
        return load_named_model(text, progress=progress, dtype=dtype)
    if folder.is_dir():
        return load_from_folder(folder, dtype=dtype, allowed_roots=allowed_roots)
    if folder.is_file():
        raise CheckpointError(f"{folder} is a file; pass the folder that holds config.json and the weights")
    first = Path(text).parts[0] if Path(text).parts else ""
    if allowed_roots is not None or not looks_like_repo_id(text) or ("/" in text and Path(first).is_dir()):
        raise CheckpointError(f"checkpoint folder {text} does not exist")  # a local path, not a Hub id
    snapshot = download_snapshot(text, cache_dir=cache_dir, local_files_only=local_files_only)
    return load_from_folder(snapshot, dtype=dtype)
