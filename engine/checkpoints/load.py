"""Loading a checkpoint into :class:`engine.model.CausalLM`: a bundled model's id, a local folder, or a Hub id.

:func:`load_pretrained` (what ``CausalLM.from_pretrained`` calls) looks a name up in
:data:`engine.checkpoints.bundled.BUNDLED_MODELS` first (loaded offline, never looked up on the Hub), then as a
folder (:func:`engine.checkpoints.folder.load_from_folder`: built on the meta device, tensors assigned), then as a
Hub id.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import torch

from ..model import CausalLM
from .bundled import bundled_model, load_named_model
from .errors import CheckpointError
from .folder import load_from_folder
from .hub import download_snapshot, looks_like_repo_id

__all__ = ["load_from_folder", "load_named_model", "load_pretrained"]


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
        path_or_repo_id: the id of a bundled model (:data:`engine.checkpoints.bundled.BUNDLED_MODELS`:
            ``"smollm2-135m"`` from its pip package's GGUF file, converted once into a cache folder;
            ``"tang-poems-small"`` shipped in the repository, SHA-256 checked), loaded offline; a local folder
            holding ``config.json`` and weights; or a Hub id (``"gpt2"``, ``"HuggingFaceTB/SmolLM-135M"``) fetched
            through :func:`download_snapshot` when no such folder exists. A folder of the same name as a bundled id
            wins over it.
        dtype: dtype of the loaded parameters (default float32; ``None`` keeps the stored dtype).
        allowed_roots: if given, every file read must resolve inside one of these folders
            (:class:`UnsafePathError` otherwise); Hub downloads are not attempted in that mode.
        cache_dir, local_files_only: passed to ``snapshot_download`` for Hub ids.
        progress: ``progress(done, total, stage)`` during a bundled model's first GGUF conversion (ignored
            otherwise).
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
    bundled = None if folder.exists() else bundled_model(text)
    if bundled is not None:  # one of BUNDLED_MODELS: loaded offline by its own loader, never looked up on the Hub
        return bundled.load(bundled.name, dtype=dtype, progress=progress)
    if folder.is_dir():
        return load_from_folder(folder, dtype=dtype, allowed_roots=allowed_roots)
    if folder.is_file():
        raise CheckpointError(f"{folder} is a file; pass the folder that holds config.json and the weights")
    first = Path(text).parts[0] if Path(text).parts else ""
    if allowed_roots is not None or not looks_like_repo_id(text) or ("/" in text and Path(first).is_dir()):
        raise CheckpointError(f"checkpoint folder {text} does not exist")  # a local path, not a Hub id
    snapshot = download_snapshot(text, cache_dir=cache_dir, local_files_only=local_files_only)
    return load_from_folder(snapshot, dtype=dtype)
