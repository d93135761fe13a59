"""The activation record, and the interventions, of one forward call: :class:`ActivationRecorder`.

A forward pass that records reads like the tutorials plus one call per recorded tensor::

    h = rec("ln1.hook_normalized", self.input_layernorm(x))  # stores h under "blocks.3.ln1.hook_normalized"

``rec(name, tensor)`` stores the tensor under the recorder's prefix + ``name`` and returns it unchanged;
``rec.scope("attn")`` is a child recorder writing into the same dict under ``"<prefix>attn."``. Names follow
TransformerLens (``blocks.{i}.hook_resid_pre`` ...).

:class:`engine.model.CausalLM` makes one recorder, with a fresh dict, per forward call and passes it down; no module
keeps it, so a model shared by many browser sessions never mixes their records. :data:`NO_RECORDING` (the default)
stores nothing.

The same call is where interventions act (:mod:`engine.interventions`): a recorder built with ``edits``
``{full name: tensor -> tensor}`` returns ``edits[name](tensor)`` instead of the tensor (and records what it
returns), so the forward pass that records an activation is also the one place that can replace it. Like the
record, the edits belong to one call. Reference: TransformerLens ``HookPoint`` / ``ActivationCache`` (names), not its mechanism (hooks
attached to modules would be shared state).
"""

from __future__ import annotations

from typing import Callable, Optional

import torch


class ActivationRecorder:
    """Stores named activations of one forward call into ``store``.

    Args:
        store: the dict to write into; ``None`` records nothing.
        prefix: prepended to every name (``"blocks.3."``); :meth:`scope` builds it.
        only: if given, only names (with prefix) ending in one of these suffixes are stored, e.g.
            ``("attn.hook_pattern",)`` when only the attention weights are wanted.
        edits: ``{full name: tensor -> tensor}``: the interventions of this call (see the module docstring).
    """

    __slots__ = ("store", "prefix", "only", "edits")

    def __init__(self, store: Optional[dict[str, torch.Tensor]] = None, prefix: str = "",
                 only: Optional[tuple[str, ...]] = None,
                 edits: Optional[dict[str, Callable[[torch.Tensor], torch.Tensor]]] = None):
        self.store = store
        self.prefix = prefix
        self.only = only
        self.edits = edits or None

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """Store ``tensor`` under ``prefix + name`` (when recording and wanted) and return it, edited when an
        intervention names it."""
        if self.store is None and self.edits is None:
            return tensor
        key = self.prefix + name
        if self.edits is not None and key in self.edits:
            tensor = self.edits[key](tensor)
        if self.store is not None and (self.only is None or key.endswith(self.only)):
            self.store[key] = tensor
        return tensor

    def scope(self, name: str) -> "ActivationRecorder":
        """A recorder into the same dict (and with the same edits) whose names are prefixed with ``name + "."``."""
        if self.store is None and self.edits is None:
            return self
        return ActivationRecorder(self.store, f"{self.prefix}{name}.", self.only, self.edits)

    @property
    def recording(self) -> bool:
        """Whether anything can be stored (edits alone do not record)."""
        return self.store is not None


#: Records nothing (holds no dict, so one instance serves every call).
NO_RECORDING = ActivationRecorder()
