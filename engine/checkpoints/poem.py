"""``tang-poems-small``: a small model trained on the bundled Tang poems, shipped inside the repository.

The folder :data:`MODEL_DIR` holds ``model.safetensors`` (our own format, float32), ``config.json``,
``tokenizer.json`` and ``metrics.json`` (what the model learned, measured on held-out poems). They are written
by ``python -m tools.train_poem_model`` (deterministic: the same files on the pinned torch with one thread).

Loading (:func:`load_poem_weights`, which ``CausalLM.from_pretrained(NAME)`` runs, and :func:`load_poem_model`,
which adds the tokenizer) reads only that folder, never a path from the browser, and only safetensors
(no pickle); the SHA-256 of every file is compared with :data:`FILE_SHA256` once per process, so an edited or
truncated file is refused with a :class:`CheckpointError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import torch

from .errors import CheckpointError

NAME = "tang-poems-small"
MODEL_DIR = Path(__file__).resolve().parents[1] / "data" / "models" / NAME
METRICS_NAME = "metrics.json"
#: Every 10th entry of the corpus (index % HELDOUT_EVERY == HELDOUT_EVERY - 1) is held out.
HELDOUT_EVERY = 10

#: SHA-256 of each shipped file, written by ``tools/train_poem_model.py`` (the weights' digest is also in docs/lecturers.md).
FILE_SHA256: dict[str, str] = {
    "config.json": "d452ad4ba9afe4740022ed5cc09ece266e6922b25e2f3a527bcc4ce329537647",
    "metrics.json": "821fbb4bb525a94f9ab8fac5899373a6cbd152efc6aa535559efa230eee1eecc",
    "model.safetensors": "505a0c2b70cbeb2e09a4f004004e5fc7807a3214d130b021ec29aeb8dc8734a9",
    "tokenizer.json": "9ea1442abfb8abb0f79cc7bf42d3f35feb3e76a3dd20c09406a0d09ceee26f9f",
}
WEIGHTS_SHA256 = FILE_SHA256["model.safetensors"]


@dataclass(frozen=True)
class PoemModelSpec:
    """The shipped model, as the registry lists it.

    Fields:
        name: stable id (``"tang-poems-small"``), used in links and the picker.
        folder: where its files live inside the repository.
        languages: ISO 639-1 codes of the text it was trained on.
        num_parameters: the parameter count the loaded model must have (tied head counted once).
    """

    name: str
    folder: Path
    languages: tuple[str, ...]
    num_parameters: int


def split_poems(text: str) -> tuple[str, str]:
    """``(train_text, heldout_text)``: the corpus's entries (separated by one blank line), every
    :data:`HELDOUT_EVERY`-th one (indices 9, 19, ...) held out; each part joined again by blank lines."""
    entries = [e.strip("\n") for e in text.split("\n\n") if e.strip()]
    train = [e for i, e in enumerate(entries) if i % HELDOUT_EVERY != HELDOUT_EVERY - 1]
    held = [e for i, e in enumerate(entries) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]
    return "\n\n".join(train) + "\n", "\n\n".join(held) + "\n"


def build_tokenizer():
    """The project's character-level BPE on the Tang poems with one id per distinct character plus ``[UNK]``
    (so no merges: one token is one character)."""
    from ..tokenizer import load_corpus, train_bpe

    return train_bpe(len(set(load_corpus("zh"))) + 1, "zh")


def training_text() -> tuple[str, str]:
    """``(train_text, heldout_text)``: :func:`split_poems` of the Tang poems."""
    from ..tokenizer import load_corpus

    return split_poems(load_corpus("zh"))


def token_streams(tokenizer) -> tuple[torch.Tensor, torch.Tensor]:
    """``(train_ids, heldout_ids)``: :func:`training_text` encoded, 1-D int64."""
    train, held = training_text()
    return (torch.tensor(tokenizer.encode(train), dtype=torch.long),
            torch.tensor(tokenizer.encode(held), dtype=torch.long))


#: The shipped model as the checkpoint picker lists it (``languages``: what its training text was written in).
POEM_MODELS: dict[str, PoemModelSpec] = {
    NAME: PoemModelSpec(name=NAME, folder=MODEL_DIR, languages=("zh",), num_parameters=1_123_456),
}

_VERIFIED: set[tuple[str, str]] = set()  # (folder, name) pairs whose files matched their digests in this process
_VERIFY_LOCK = threading.Lock()


def is_poem_model(name: object) -> bool:
    """True when ``name`` is the id of a model shipped in the repository (:data:`POEM_MODELS`)."""
    return isinstance(name, str) and name in POEM_MODELS


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_folder(folder: Path, digests: dict[str, str]) -> None:
    """Check every file of ``digests`` in ``folder`` against its SHA-256 (once per process and folder).

    Raises:
        CheckpointError: a file is missing or its digest differs (the message names the file and both digests).
    """
    key = (str(Path(folder).resolve()), json.dumps(digests, sort_keys=True))
    with _VERIFY_LOCK:
        if key in _VERIFIED:
            return
        if not digests:
            raise CheckpointError(f"{folder}: no digests to verify the shipped files against")
        for name, want in sorted(digests.items()):
            path = Path(folder) / name
            if not path.is_file():
                raise CheckpointError(f"{path} is missing: the shipped model is incomplete "
                                      "(restore it with git, or rebuild it: python -m tools.train_poem_model)")
            got = sha256_file(path)
            if got != want:
                raise CheckpointError(f"{path} was modified: its SHA-256 is {got}, the shipped file's is {want}; "
                                      "refusing to load it (restore it with git checkout, or rebuild it: "
                                      "python -m tools.train_poem_model)")
        _VERIFIED.add(key)


def _checked_folder(name: str, folder: Path | None, digests: dict[str, str] | None) -> Path:
    if not is_poem_model(name):
        raise CheckpointError(f"unknown shipped model {name!r}; known: {', '.join(POEM_MODELS)}")
    folder = Path(folder) if folder is not None else POEM_MODELS[name].folder
    verify_folder(folder, FILE_SHA256 if digests is None else digests)
    return folder


def read_metrics(name: str = NAME, folder: Path | None = None, digests: dict[str, str] | None = None) -> dict:
    """``metrics.json`` of a shipped model (what it learned on held-out poems), after the files were verified."""
    folder = _checked_folder(name, folder, digests)
    return json.loads((folder / METRICS_NAME).read_text(encoding="utf-8"))


def load_poem_weights(name: str = NAME, folder: Path | None = None, digests: dict[str, str] | None = None,
                      dtype: torch.dtype | None = torch.float32):
    """``CausalLM`` of a shipped model, after its files matched their SHA-256 (:func:`verify_folder`).

    Reads only ``folder`` (default: the spec's folder inside the repository): ``model.safetensors`` (safetensors,
    never pickle) and ``config.json``. ``digests`` (default :data:`FILE_SHA256`) is for tests. This is what
    ``CausalLM.from_pretrained(name)`` runs (:mod:`engine.checkpoints.bundled`).

    Raises:
        CheckpointError: unknown name, a file missing or modified, or a parameter count unlike the spec's.
    """
    from .folder import load_from_folder
    from .io import SAFETENSORS_NAME

    folder = _checked_folder(name, folder, digests)
    if not (folder / SAFETENSORS_NAME).is_file():
        raise CheckpointError(f"{folder} holds no {SAFETENSORS_NAME}")
    model = load_from_folder(folder, dtype=dtype)
    spec = POEM_MODELS[name]
    if spec.num_parameters and model.num_parameters() != spec.num_parameters:
        raise CheckpointError(f"{name}: {model.num_parameters():,} parameters, expected {spec.num_parameters:,}")
    return model


def load_poem_model(name: str = NAME, folder: Path | None = None, digests: dict[str, str] | None = None):
    """``(model, tokenizer)`` of a shipped model: :func:`load_poem_weights` and the folder's ``tokenizer.json``.

    Raises:
        CheckpointError: see :func:`load_poem_weights`.
    """
    from ..tokenizer import TextTokenizer

    model = load_poem_weights(name, folder, digests)
    return model, TextTokenizer.from_folder(_checked_folder(name, folder, digests))
