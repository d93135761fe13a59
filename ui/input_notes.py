"""What the sidebar says about its input: which tokenizer made the tokens, and the tutorial words of a random-id
preset. Strings in ``ui/strings/input_notes.py``."""

from __future__ import annotations

from engine.config import PRESET_INPUT_LABELS
from engine.tokenizer import GPT2_VOCAB_SIZE, TextTokenizer
from ui.i18n import t


def tokenizer_note(tok: TextTokenizer) -> str:
    """One sentence naming the tokenizer in use and where it came from."""
    if tok.name.startswith("byte-level-bpe-"):
        return t("tokenizer.byte_level", n=f"{tok.vocab_size:,}", gpt2=f"{GPT2_VOCAB_SIZE:,}")
    if tok.name.startswith("bpe-"):
        return t("tokenizer.char_bpe", n=f"{tok.vocab_size:,}")
    return t("tokenizer.checkpoint", name=tok.name, n=f"{tok.vocab_size:,}")


def random_input_tokens(preset: str | None, ids: list[int]) -> tuple[list[str], str | None]:
    """Display tokens for random ids, and a note: a tutorial preset's own words when the length matches
    (the GPT-2 walkthrough's 猫 吃 鱼), else ``#id``."""
    words = PRESET_INPUT_LABELS.get(preset or "")
    if words is not None and len(words) == len(ids):
        return list(words), t("input.tutorial_words", words=" ".join(words), ids=" ".join(f"#{i}" for i in ids))
    return [f"#{i}" for i in ids], None
