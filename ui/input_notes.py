"""What the sidebar says about its input: which tokenizer made the tokens, and the tutorial words of a random-id
preset. Strings in ``ui/strings/input_notes.py``."""

from __future__ import annotations

from engine.tokenizer import GPT2_VOCAB_SIZE, TextTokenizer
from engine.tokenizer.pieces import visible_char
from settings.build import random_tokens
from ui.escape import md_code
from ui.i18n import t

SHOWN_UNKNOWN = 20  # distinct unknown characters named at most


def tokenizer_note(tok: TextTokenizer) -> str:
    """One sentence naming the tokenizer in use and where it came from."""
    if tok.name.startswith("byte-level-bpe-"):
        return t("tokenizer.byte_level", n=f"{tok.vocab_size:,}", gpt2=f"{GPT2_VOCAB_SIZE:,}")
    if tok.name.startswith("bpe-"):
        return t("tokenizer.char_bpe", n=f"{tok.vocab_size:,}")
    return t("tokenizer.checkpoint", name=tok.name, n=f"{tok.vocab_size:,}")


def random_input_tokens(preset: str | None, ids: list[int]) -> tuple[list[str], str | None]:
    """Display tokens for random ids (:func:`settings.build.random_tokens`), and a note when they are a tutorial
    preset's own words."""
    tokens, plain = random_tokens(preset, ids), [f"#{i}" for i in ids]
    if tokens == plain:
        return tokens, None
    return tokens, t("input.tutorial_words", words=" ".join(tokens), ids=" ".join(plain))


def unknown_summary(tok: TextTokenizer, text: str, max_tokens: int | None = None) -> tuple[int, list[str]]:
    """How many characters of ``text`` the tokenizer turns into its unknown token, and which (distinct, in order
    of first appearance)."""
    chars = tok.unknown_characters(text, max_tokens)
    return len(chars), list(dict.fromkeys(chars))


def unknown_note(tok: TextTokenizer, text: str, max_tokens: int | None = None, sliders: bool = True) -> str | None:
    """The page's notice when characters of the input became ``[UNK]`` (None when none did): how many, which, and
    what to do. ``sliders``: the model is built from the sidebar (so a larger vocabulary is one choice)."""
    n, distinct = unknown_summary(tok, text, max_tokens)
    if not n:
        return None
    shown = " ".join(md_code(visible_char(c)) for c in distinct[:SHOWN_UNKNOWN])
    if len(distinct) > SHOWN_UNKNOWN:
        shown += " " + t("input.unknown.more", n=len(distinct) - SHOWN_UNKNOWN)
    if sliders:
        fix = t("input.unknown.fix_sliders", vocab=t("cfg.vocab_size.label"), model=t("model.source.label"))
    else:
        fix = t("input.unknown.fix_checkpoint", v=f"{tok.vocab_size:,}")
    return t("input.unknown", n=f"{n:,}", k=f"{len(distinct):,}", chars=shown, v=f"{tok.vocab_size:,}") + " " + fix
