"""The errors every checkpoint module raises. Each message is meant for a person and names the file or field."""

from __future__ import annotations


class CheckpointError(ValueError, OSError):
    """A checkpoint cannot be read: missing or corrupt file, unsafe pickle, missing/unexpected tensors, no
    network for a Hub id. The message names the file or field involved."""


class UnsupportedCheckpointError(CheckpointError):
    """The ``config.json`` asks for a feature this model does not implement; the message names the field."""


class UnsafePathError(CheckpointError, PermissionError):
    """A requested checkpoint path lies outside every allowed root (``..``, absolute paths, symlink escapes)."""


class GGUFPackageMissingError(CheckpointError):
    """The package that carries a GGUF file (or the ``gguf`` reader) is not installed; says how to install it."""
