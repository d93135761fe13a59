"""Bytes and readable pieces: GPT-2's byte -> unicode table and its inverse, UTF-8 decoding with byte offsets,
and the escaping of whitespace control characters for display."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable-unicode-character table.

    Returns:
        dict[int, str]: all 256 byte values mapped to distinct single characters; printable
        Latin-1 bytes map to themselves, the rest to U+0100 onwards (so space 0x20 -> ``Ġ``,
        newline 0x0A -> ``Ċ``).

    Source: ``bytes_to_unicode`` in OpenAI's GPT-2 ``encoder.py``; the same table is used by
    the ``tokenizers`` ByteLevel pre-tokenizer.
    """
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


@functools.lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of :func:`bytes_to_unicode`: printable character -> byte value."""
    return {c: b for b, c in bytes_to_unicode().items()}


ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_controls(text: str) -> str:
    """Make whitespace control characters visible: newline -> ``\\n`` (two characters)."""
    return "".join(ESCAPES.get(ch, ch) for ch in text)


def decode_utf8_positions(data: bytes) -> list[tuple[int, str]]:
    """Decode UTF-8 bytes as ``[(start byte offset, char), ...]``; invalid bytes -> U+FFFD."""
    out = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        length = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else (
            4 if b >> 3 == 0b11110 else 0
        )
        if length:
            try:
                out.append((i, data[i : i + length].decode("utf-8")))
                i += length
                continue
            except UnicodeDecodeError:
                pass
        out.append((i, "\ufffd"))
        i += 1
    return out
