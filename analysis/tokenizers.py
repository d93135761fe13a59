"""Tokens as bytes: what each token of a text covers, shown so that whitespace and partial UTF-8 are visible,
and the same text under two tokenizers side by side.

A byte-level BPE (GPT-2, SmolLM2) works on the UTF-8 bytes of the text, so a Chinese character (3 bytes) can
be split over several tokens; such a token holds bytes that are no character on their own and is shown by the
app's one display rule (``engine.tokenizer.pieces.token_pieces``): ``‹E5 BA›床₁/₂``. The bundled BPE works on
whole characters and never splits one.
References: Radford et al. 2019 (byte-level BPE); Sennrich et al. 2016 (BPE).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from engine.tokenizer import TextTokenizer
from engine.tokenizer.pieces import unicode_to_bytes

def is_whole_utf8(data: bytes) -> bool:
    """Whether ``data`` is a sequence of whole UTF-8 characters."""
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def vocab_bytes(tok: TextTokenizer, ids: Sequence[int]) -> list[bytes | None]:
    """The bytes each vocabulary entry stands for; None for special tokens and for entries that are no text
    (``[UNK]``). Byte-level entries are mapped back through GPT-2's byte-to-unicode table."""
    special = special_ids(tok)
    u2b = unicode_to_bytes()
    out: list[bytes | None] = []
    for i, raw in zip(ids, tok.raw_tokens(ids)):
        if i in special:
            out.append(None)
        elif tok.byte_level:
            out.append(bytes(u2b[c] for c in raw) if all(c in u2b for c in raw) else None)
        else:
            out.append(raw.encode("utf-8"))
    return out


def tokenize(tok: TextTokenizer, text: str) -> pd.DataFrame:
    """One row per token of ``text`` under ``tok`` (no special tokens added).

    Columns: ``index``, ``id``, ``piece`` (the display rule's label, ``TextTokenizer.token_strings``), ``n_bytes`` (bytes of the text this
    token covers), ``hex`` (those bytes), ``whole`` (the bytes are whole UTF-8 characters), ``unknown`` (the
    token is the unknown token). The ``n_bytes`` column sums to the UTF-8 length of ``text``.
    """
    enc = tok.tokenizer.encode(text, add_special_tokens=False)
    ids = list(enc.ids)
    if tok.byte_level:
        covered = vocab_bytes(tok, ids)
    else:  # character-level BPE: a token covers its characters of the text ([UNK] included)
        covered = [text[s:e].encode("utf-8") for s, e in enc.offsets]
    unk = tok.unk_token_id
    rows = []
    for k, (i, b, raw, piece) in enumerate(zip(ids, covered, tok.raw_tokens(ids), tok.token_strings(ids))):
        b = b if b is not None else raw.encode("utf-8")
        rows.append((k, i, piece, len(b), b.hex(" "), is_whole_utf8(b), i == unk))
    return pd.DataFrame(rows, columns=["index", "id", "piece", "n_bytes", "hex", "whole", "unknown"])


def compare(tables: Mapping[str, pd.DataFrame], text: str) -> pd.DataFrame:
    """Summary per tokenizer of :func:`tokenize` tables of the same ``text``.

    Columns: ``tokenizer``, ``tokens``, ``bytes`` (UTF-8 length of the text), ``chars``, ``bytes_per_token``,
    ``chars_per_token``, ``unknown`` (tokens that are the unknown token), ``partial`` (tokens holding bytes
    that are no whole character).
    """
    n_bytes, n_chars = len(text.encode("utf-8")), len(text)
    rows = []
    for name, df in tables.items():
        n = len(df)
        rows.append((name, n, n_bytes, n_chars, n_bytes / n if n else float("nan"), n_chars / n if n else float("nan"),
                     int(df["unknown"].sum()), int((~df["whole"]).sum())))
    return pd.DataFrame(rows, columns=["tokenizer", "tokens", "bytes", "chars", "bytes_per_token", "chars_per_token",
                                       "unknown", "partial"])


def special_ids(tok: TextTokenizer) -> set[int]:
    """Ids of the tokenizer's special tokens (and of its unknown token)."""
    ids = {int(i) for i, t in tok.tokenizer.get_added_tokens_decoder().items() if t.special}
    if tok.unk_token_id is not None:
        ids.add(tok.unk_token_id)
    return ids
