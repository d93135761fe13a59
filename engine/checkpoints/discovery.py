"""Finding checkpoint folders, and refusing every path outside the allowed roots.

:func:`list_checkpoints` and :func:`resolve_checkpoint` look under the models directory and the Hugging Face hub
cache only: the browser must never make the server read an arbitrary path (``..``, absolute paths elsewhere,
symlinks pointing out of a root all raise :class:`UnsafePathError`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .errors import CheckpointError, UnsafePathError
from .hub import looks_like_repo_id
from .io import CONFIG_NAME
from .registry import config_from_hf, detect_family

PROJECT_ROOT = Path(__file__).resolve().parents[2]


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


def default_hub_cache_dir() -> Path | None:
    """``huggingface_hub.constants.HF_HUB_CACHE``, or None without huggingface_hub."""
    try:
        from huggingface_hub import constants

        return Path(constants.HF_HUB_CACHE)
    except Exception:  # pragma: no cover
        return None


def default_allowed_roots(models_dir: str | Path | None = None, include_hub_cache: bool = True) -> list[Path]:
    """Folders a checkpoint may be read from: the models directory and (optionally) the Hub cache."""
    roots = [Path(models_dir) if models_dir is not None else default_models_dir()]
    hub = default_hub_cache_dir() if include_hub_cache else None
    if hub is not None:
        roots.append(hub)
    return roots


def check_inside(path: Path, roots: list[Path] | None) -> Path:
    """``path`` resolved (symlinks followed); :class:`UnsafePathError` when ``roots`` is given and it lies outside."""
    resolved = path.resolve()
    if roots is not None and not any(resolved.is_relative_to(r) for r in roots):
        raise UnsafePathError(f"refusing to read {path}: it resolves to {resolved}, outside the allowed folders")
    return resolved


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
            cache = Path(hub_cache_dir) if hub_cache_dir is not None else default_hub_cache_dir()
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
    if looks_like_repo_id(text):
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
