"""The activation record of one forward call: :class:`ActivationRecorder`.

A forward pass that records reads like the tutorials plus one call per recorded tensor::

    h = rec("ln1.hook_normalized", self.input_layernorm(x))  # stores h under "blocks.3.ln1.hook_normalized"

``rec(name, tensor)`` stores the tensor under the recorder's prefix + ``name`` and returns it unchanged;
``rec.scope("attn")`` is a child recorder writing into the same dict under ``"<prefix>attn."``. Names follow
TransformerLens (``blocks.{i}.hook_resid_pre`` ...).

:class:`engine.model.CausalLM` makes one recorder, with a fresh dict, per forward call and passes it down; no module
keeps it, so a model shared by many browser sessions never mixes their records. :data:`NO_RECORDING` (the default)
stores nothing. Reference: TransformerLens ``HookPoint`` / ``ActivationCache`` (names), not its mechanism (hooks
attached to modules would be shared state).
"""

from __future__ import annotations

from typing import Optional

import torch


class ActivationRecorder:
    """Stores named activations of one forward call into ``store``.

    Args:
        store: the dict to write into; ``None`` records nothing.
        prefix: prepended to every name (``"blocks.3."``); :meth:`scope` builds it.
        only: if given, only names (with prefix) ending in one of these suffixes are stored, e.g.
            ``("attn.hook_pattern",)`` when only the attention weights are wanted.
    """

    __slots__ = ("store", "prefix", "only")

    def __init__(self, store: Optional[dict[str, torch.Tensor]] = None, prefix: str = "",
                 only: Optional[tuple[str, ...]] = None):
        self.store = store
        self.prefix = prefix
        self.only = only

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """Store ``tensor`` under ``prefix + name`` (when recording and wanted); return it unchanged."""
        if self.store is not None:
            key = self.prefix + name
            if self.only is None or key.endswith(self.only):
                self.store[key] = tensor
        return tensor

    def scope(self, name: str) -> "ActivationRecorder":
        """A recorder into the same dict whose names are prefixed with ``name + "."``."""
        if self.store is None:
            return self
        return ActivationRecorder(self.store, f"{self.prefix}{name}.", self.only)

    @property
    def recording(self) -> bool:
        """Whether anything can be stored."""
        return self.store is not None


#: Records nothing (holds no dict, so one instance serves every call).
NO_RECORDING = ActivationRecorder()
