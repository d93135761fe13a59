"""Reading checkpoint files: ``config.json``, safetensors (single or sharded) and ``pytorch_model.bin``.

``pytorch_model.bin`` is read only through ``torch.load(weights_only=True)``: tensors and plain containers, never
arbitrary pickled objects (unpickling can run code). safetensors (``safetensors.safe_open``): the header lists every
tensor's dtype, shape and byte range, so a truncated file is detected before any tensor is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from .errors import CheckpointError, UnsafePathError

CONFIG_NAME = "config.json"
SAFETENSORS_NAME = "model.safetensors"
SAFETENSORS_INDEX_NAME = "model.safetensors.index.json"
BIN_NAME = "pytorch_model.bin"


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


#: ``mapped(stored name, stored dtype)``: True when that tensor may stay a view of the file's memory map.
MapRule = Callable[[str, torch.dtype], bool]


def _iter_safetensors(path: Path, mapped: MapRule | None = None) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield ``(name, tensor)`` one at a time, in file order.

    ``safe_open`` validates the header first (a truncated file fails there, before any tensor is read). A tensor
    for which ``mapped(name, dtype)`` is True is a view of the file's read-only, copy-on-write memory map: nothing
    is read or copied until a page is used, and those pages are the page cache's (file-backed, shared with every
    process that maps the file, dropped by the kernel under memory pressure instead of swapped). Every other
    tensor (the ones the loader reshapes or converts anyway) is read with plain ``readinto`` into fresh memory,
    so the file's pages behind it do not stay mapped after the conversion. Dtypes outside
    :data:`_SAFETENSORS_DTYPES` (fp8 ...) always come from ``get_tensor``.
    """
    import struct

    from safetensors import SafetensorError, safe_open

    try:
        handle = safe_open(str(path), framework="pt", device="cpu")
        keys = list(handle.keys())
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
                if dtype is None or (mapped is not None and mapped(key, dtype)):
                    yield key, handle.get_tensor(key)  # a view of the memory map
                    continue
                begin, stop = entry["data_offsets"]
                buf = torch.empty(stop - begin, dtype=torch.uint8)  # (nbytes,)
                fh.seek(base + begin)
                got = fh.readinto(memoryview(buf.numpy())) if stop > begin else 0
                if got != stop - begin:
                    raise CheckpointError(f"{path.name} is truncated: tensor {key!r} is incomplete; download it again")
                yield key, buf.view(dtype).reshape(entry["shape"])
    except (OSError, ValueError, KeyError, struct.error, SafetensorError) as exc:
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


def iter_tensors(files: list[Path], mapped: MapRule | None = None) -> Iterator[tuple[str, torch.Tensor]]:
    """``(name, tensor)`` of every file in turn, one tensor at a time (a .bin file is read whole, then handed out).

    ``mapped``: which safetensors tensors stay views of the file's memory map (see :func:`_iter_safetensors`;
    default none: every tensor is read into fresh memory).
    """
    for path in files:
        if path.suffix == ".safetensors":
            yield from _iter_safetensors(path, mapped)
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
