"""The bundled corpus: Tang poems and English prose in ``engine/data`` (sources and licences in its README)."""

from __future__ import annotations

import functools
from pathlib import Path


DATA_DIR = Path(__file__).resolve().parents[1] / "data"


#: Corpus name -> file (UTF-8 plain text). Sources and licences: ``engine/data/README.md``.
CORPUS_FILES: dict[str, Path] = {
    "zh": DATA_DIR / "tang_poems.txt",  # 唐诗三百首, from Debian's fortunes-zh
    "en": DATA_DIR / "english.txt",  # Book of Genesis (KJV), from Debian's bible-kjv-text
}


def load_corpus(name: str = "all") -> str:
    """Return the text of a bundled corpus.

    Args:
        name: ``"zh"`` (Tang poems), ``"en"`` (English prose) or ``"all"`` (the Chinese text,
            then the English text, separated by one blank line).

    Returns:
        str: the UTF-8 decoded text, newlines as ``"\\n"``.

    Raises:
        ValueError: ``name`` is not one of ``"all"``, ``"zh"``, ``"en"``.
        FileNotFoundError: a corpus file is missing from ``engine/data``.
    """
    if name == "all":
        return "\n".join(_read_corpus_file(key) for key in CORPUS_FILES)
    if name not in CORPUS_FILES:
        raise ValueError(
            f"unknown corpus {name!r}; expected one of {['all', *CORPUS_FILES]}"
        )
    return _read_corpus_file(name)


@functools.lru_cache(maxsize=4)
def _read_corpus_file(key: str) -> str:
    return CORPUS_FILES[key].read_text(encoding="utf-8")
