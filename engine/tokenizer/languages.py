"""Is a text in the languages a model was trained on? A measurable rule on the text's letters.

Rule (decided): count the letters of the text (Unicode categories L*; digits, punctuation, spaces and symbols are
in no language); a letter is *inside* the model's languages when its Unicode name starts with one of the scripts
of those languages (:data:`SCRIPTS`: English -> LATIN, Chinese -> CJK, ...). The text is *mostly outside* when
more than :data:`OUTSIDE_SHARE` of its letters are outside. A text without letters (numbers, symbols) is never
outside; a language missing from :data:`SCRIPTS` claims nothing (no notice rather than a wrong one).
"""

from __future__ import annotations

import unicodedata
from typing import Sequence

#: Unicode character-name prefixes of each language's letters
SCRIPTS: dict[str, tuple[str, ...]] = {
    "en": ("LATIN",), "fr": ("LATIN",), "de": ("LATIN",), "es": ("LATIN",), "it": ("LATIN",), "pt": ("LATIN",),
    "zh": ("CJK",), "ja": ("CJK", "HIRAGANA", "KATAKANA"), "ko": ("HANGUL", "CJK"), "ru": ("CYRILLIC",),
}
OUTSIDE_SHARE = 0.5  # more than half of the letters outside the model's scripts


def outside_share(text: str, languages: Sequence[str]) -> tuple[float, int]:
    """``(share of the letters outside the scripts of languages, number of letters)``; ``(0.0, n)`` when none of
    ``languages`` is in :data:`SCRIPTS`, ``(0.0, 0)`` for a text without letters."""
    letters = [ch for ch in text if unicodedata.category(ch).startswith("L")]
    scripts = tuple(p for lang in languages for p in SCRIPTS.get(lang, ()))
    if not letters or not scripts:
        return 0.0, len(letters)
    outside = sum(1 for ch in letters if not unicodedata.name(ch, "").startswith(scripts))
    return outside / len(letters), len(letters)


def mostly_outside(text: str, languages: Sequence[str]) -> bool:
    """True when more than :data:`OUTSIDE_SHARE` of the text's letters are outside the model's languages."""
    return outside_share(text, languages)[0] > OUTSIDE_SHARE
