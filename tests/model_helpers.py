"""Helpers the tests of every layer share (torch only, so engine tests can use them without Streamlit)."""

from __future__ import annotations

import hashlib

import torch


def checksum(model: torch.nn.Module) -> str:
    """SHA-256 over every parameter's and buffer's name, dtype, shape and bytes: changes if any element changes
    (a sum could stay equal when two elements swap or changes cancel)."""
    h = hashlib.sha256()
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        t = t.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def perturb(model: torch.nn.Module, seed: int) -> None:
    """Move every parameter away from its init (norm weights off 1, biases off 0) so parity means something."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.3)
