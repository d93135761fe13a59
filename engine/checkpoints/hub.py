"""Hugging Face Hub ids: fetched only through ``huggingface_hub.snapshot_download`` into the standard cache.

Nothing else in :mod:`engine.checkpoints` touches the network; with ``HF_HUB_OFFLINE`` set a cached snapshot is used
or a :class:`CheckpointError` says how to place the folder in ``models/`` by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import CheckpointError

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


def looks_like_repo_id(text: str) -> bool:
    """``"gpt2"`` or ``"org/name"``: letters, digits, ``_.-``, at most one slash, no ``..``."""
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
