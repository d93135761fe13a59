"""Seeded model construction that is safe when several threads build models at once.

``torch.manual_seed(seed); CausalLM(config)`` draws the initial weights from torch's *process-wide* CPU RNG.
A Streamlit server runs every session's script in its own thread, so two sessions building models at the same
time interleave their draws: both models then get weights that match neither ``(config, seed)`` (measured:
tests/pages/test_concurrency.py fails this way without the lock). :func:`seeded` serialises such blocks and restores
the global RNG afterwards, so the result is exactly that of a fresh single-threaded
``torch.manual_seed(seed); ...`` and other code's random streams are not disturbed.

Every code path that seeds the global RNG to build a model should use it (the sidebar's cached builder does;
so should the trainer). Code that draws from its own ``torch.Generator`` needs nothing.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import torch

_GLOBAL_RNG_LOCK = threading.RLock()


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block alone on torch's global CPU RNG, seeded with ``seed``; the previous RNG state is restored.

    Args:
        seed: any int accepted by ``torch.manual_seed``.
    Note:
        Only the CPU generator is forked (``fork_rng(devices=[])``); CUDA generators are left alone.
    """
    with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
