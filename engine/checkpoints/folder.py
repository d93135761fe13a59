"""A local checkpoint folder into :class:`engine.model.CausalLM` (every other loader ends here).

The model is built on the ``meta`` device (parameters are shapes only, no initialisation runs: see
:class:`engine.layers.Linear`), and the renamed tensors are assigned (``load_state_dict(assign=True)``). A safetensors
tensor stored under our layout and dtype is assigned as a view of the file's memory map (nothing is copied; its
pages are the page cache's, shared by every process that loads the file); one the family reshapes (GPT-2's
Conv1D transposes, the fused q/k/v) or converts to another dtype is read once into fresh memory and converted.
So a load costs at most about one copy of the weights, and none for a file already in our layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import torch

from ..layers import SinusoidalPositions, sinusoidal_table
from ..model import CausalLM
from .discovery import check_inside
from .errors import CheckpointError
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
    """Load a local checkpoint folder into a :class:`CausalLM` (see :func:`engine.checkpoints.load.load_pretrained`).

    Raises:
        CheckpointError / UnsupportedCheckpointError / UnsafePathError: see
        :func:`engine.checkpoints.load.load_pretrained`.
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
