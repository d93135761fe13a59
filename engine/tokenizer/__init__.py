"""Tokenizers for the Transformer Block Explorer: the bundled corpus, a small BPE trainer,
loading of saved Hugging Face / GPT-2 tokenizers, and readable token pieces for display.

Modules: ``corpus`` (:func:`load_corpus`), ``text`` (:class:`TextTokenizer`, loading from a folder or a named
model), ``pieces`` (GPT-2's byte-to-unicode table, UTF-8 pieces, escapes), ``bpe`` (:func:`train_bpe`,
:func:`train_byte_level_bpe`, :func:`bundled_tokenizer`). Everything is importable from ``engine.tokenizer``.

References (BPE, GPT-2's byte-level BPE, the ``tokenizers`` library): in :mod:`engine.tokenizer.bpe`.

This package never imports streamlit or plotly; it only needs ``tokenizers``.

Design of :func:`train_bpe`
---------------------------
* Base alphabet = single Unicode characters (not bytes), so a Chinese character is never
  split: every vocabulary entry is a whole character or a merge of whole characters.
  Characters outside the alphabet encode to ``[UNK]``.
* Pre-tokenization: each run of newlines is its own piece, a space starts a new piece
  (GPT-2 style, ``" the"``), and every punctuation mark (ASCII or CJK such as ``，`` and
  ``。``) is isolated. Hence merges never cross punctuation or newlines.
* No normalizer and a concatenating (``Fuse``) decoder: decoding the ids of a text made only
  of in-alphabet characters gives the text back byte for byte (spaces and newlines included).
"""

from .bpe import (
    ENDOFTEXT,
    GPT2_VOCAB_SIZE,
    MIN_VOCAB_SIZE,
    UNK_TOKEN,
    _train_bpe_cached,  # noqa: F401  (tests clear its cache)
    bundled_tokenizer,
    train_bpe,
    train_byte_level_bpe,
)
from .corpus import CORPUS_FILES, DATA_DIR, load_corpus
from .pieces import bytes_to_unicode
from .text import TextTokenizer

__all__ = [
    "DATA_DIR",
    "CORPUS_FILES",
    "UNK_TOKEN",
    "MIN_VOCAB_SIZE",
    "load_corpus",
    "TextTokenizer",
    "train_bpe",
    "train_byte_level_bpe",
    "bundled_tokenizer",
    "GPT2_VOCAB_SIZE",
    "bytes_to_unicode",
    "ENDOFTEXT",
]
