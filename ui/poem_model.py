"""The Tang-poem model shipped in the repository, in the app: its name in the picker and what it learned."""

from __future__ import annotations

from engine.checkpoints.poem import POEM_MODELS, read_metrics
from ui.format import number
from ui.i18n import t


def poem_label(name: str) -> str:
    """Display name in the checkpoint picker (translated; the id stays ``tang-poems-small`` in links)."""
    params = read_metrics(name)["num_parameters"]
    return t("poem.title", params=f"{params / 1e6:.1f} M")


def learned_caption(metrics: dict) -> str:
    """The sidebar caption under the picker: the held-out numbers of ``metrics.json``, as the training script
    measured them on the shipped weights (a test recomputes them)."""
    return t("poem.learned", poems=metrics["heldout_poems"], tokens=f"{metrics['heldout_tokens']:,}",
             loss=number(metrics["heldout_loss"], ".2f"), lnv=number(metrics["ln_vocab"], ".2f"),
             vocab=f"{metrics['vocab_size']:,}", comma=number(metrics["comma_prob"], ".2f"),
             comma0=number(metrics["init_comma_prob"], ".4f"), period=number(metrics["period_prob"], ".2f"),
             lines=metrics["n_lines"])


__all__ = ["POEM_MODELS", "learned_caption", "poem_label"]
