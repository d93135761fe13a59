"""Bytes and the display rule for token strings: GPT-2's byte -> unicode table and its inverse, and
:func:`token_pieces`, the one rule by which every page shows a token (whole characters as themselves, bytes that
are no whole character as ``‹E5 BA›`` with the character that neighbouring tokens complete, whitespace as marks).

This module holds the byte analysis only; the sentences that name a token in the reader's language are built from
its :class:`TokenPiece` in the ui layer (``ui/tokens.py``)."""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from typing import Sequence, Union


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


# ------------------------------------------------------------------------------------------------------------
# The display rule for token strings (one rule for every place a token is shown)
# ------------------------------------------------------------------------------------------------------------
#: visible marks for whitespace (the marks the app uses in every label and in markdown: never a blank label)
MARKS = {" ": "␣", "\n": "⏎", "\r": "␍", "\t": "⇥"}
#: an empty token string (never a blank label)
EMPTY = "∅"
CHAR_MAX_BYTES = 4  # the longest UTF-8 character
SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def visible_char(ch: str) -> str:
    """One character as shown in a label: whitespace as its mark (:data:`MARKS`), any other invisible
    character (controls, format characters, other spaces: Unicode categories C* and Z*) as ``[U+00A0]``."""
    if ch in MARKS:
        return MARKS[ch]
    return f"[U+{ord(ch):04X}]" if unicodedata.category(ch)[0] in "CZ" else ch


def visible_text(text: str) -> str:
    """Whole characters as shown in a label (:func:`visible_char` of each)."""
    return "".join(visible_char(ch) for ch in text)


def byte_notation(data: bytes) -> str:
    """Bytes that are no whole character, in the one notation of the app: ``‹E5 BA›``."""
    return "‹" + " ".join(f"{b:02X}" for b in data) + "›"


@dataclass(frozen=True)
class Segment:
    """A run of one token: whole characters (``text``), or bytes of one character that other tokens complete
    (``data``, with ``char`` the character, ``part`` of ``parts`` the tokens that spell it and ``char_bytes`` its
    UTF-8 length), or bytes of no known character (``char`` None: cut off at the end of the text, or no valid
    UTF-8), or a special token's name (``special``)."""

    text: str = ""
    data: bytes = b""
    char: str | None = None
    part: int = 0
    parts: int = 0
    char_bytes: int = 0
    special: bool = False

    @property
    def partial(self) -> bool:
        """True for bytes that are no whole character."""
        return bool(self.data)

    @property
    def label(self) -> str:
        if self.special:
            return self.text
        if not self.data:
            return visible_text(self.text)
        mark = (visible_char(self.char) + str(self.part).translate(SUBSCRIPT) + "/" + str(self.parts).translate(SUBSCRIPT)
                if self.char is not None else "")
        return byte_notation(self.data) + mark


@dataclass(frozen=True)
class TokenPiece:
    """What one token of a sequence shows: its segments in order (see :func:`token_pieces`)."""

    segments: tuple[Segment, ...]

    @property
    def label(self) -> str:
        """The token's display string: the labels of its segments, ``∅`` for an empty token; never blank."""
        return "".join(s.label for s in self.segments) or EMPTY

    @property
    def text(self) -> str:
        """The text this token writes when the sequence is read as text: its whole characters, a split character
        once (on the token holding its last part), bytes of no character as ``‹E5›``; never U+FFFD."""
        return "".join(s.text if not s.data else (s.char if s.part == s.parts else "") if s.char is not None
                       else byte_notation(s.data) for s in self.segments)

    @property
    def whole(self) -> bool:
        """True when the token holds only whole characters (or is a special token)."""
        return not any(s.partial for s in self.segments)


def token_pieces(units: Sequence[Union[str, bytes, None]], specials: Sequence[str] = ()) -> list[TokenPiece]:
    """The display rule: one :class:`TokenPiece` per token of a sequence.

    Args:
        units: per token, its bytes (byte-level tokens: what the token spells in UTF-8), or its text (a token of a
            character-level tokenizer, always whole characters), or None for a special token whose name is the
            matching entry of ``specials``.
        specials: per token, the name shown for a special token (only read where ``units`` is None).

    Rule (decided once for the whole app; docs/architecture.md "Token strings"):
        * the bytes of consecutive byte tokens are read as one UTF-8 stream (a special token or a text token
          ends the stream); a character whose bytes all lie in one token is shown as itself;
        * bytes of a character spread over several tokens are shown in each of them as ``‹E5 BA›``, followed by
          the character and which of the tokens spelling it this one is: ``‹E5 BA›床₁/₂`` and ``‹8A›床₂/₂``
          (床 = E5 BA 8A split 2 + 1); a token holding whole characters and part of one shows both
          (``a‹E5›床₁/₂``), one segment after the other in byte order;
        * bytes that form no character (a character cut off at the end of the sequence, or invalid UTF-8) are
          shown as bytes only: ``‹E5›``; never U+FFFD;
        * whitespace keeps its visible marks (``␣`` ``⏎`` ``⇥`` ``␍``), other invisible characters show as
          ``[U+00A0]``, an empty token as ``∅``, a special token as its name: never a blank label.
    """
    pieces: list[list[Segment]] = [[] for _ in units]
    stream = bytearray()
    owner: list[int] = []

    def add(k: int, seg: Segment) -> None:
        last = pieces[k][-1] if pieces[k] else None
        if last is not None and not last.special and not seg.special:
            if not last.data and not seg.data:  # whole characters next to whole characters
                pieces[k][-1] = Segment(text=last.text + seg.text)
                return
            if last.data and seg.data and last.char is None and seg.char is None:  # bytes of no known character
                pieces[k][-1] = Segment(data=last.data + seg.data)
                return
        pieces[k].append(seg)

    def flush() -> None:
        data = bytes(stream)
        for start, end, ch in utf8_chars(data):
            holders = sorted(set(owner[start:end]))
            if ch is not None and len(holders) == 1:
                add(holders[0], Segment(text=ch))
                continue
            for part, k in enumerate(holders, 1):
                mine = bytes(data[i] for i in range(start, end) if owner[i] == k)
                if ch is None:
                    add(k, Segment(data=mine))
                else:
                    add(k, Segment(data=mine, char=ch, part=part, parts=len(holders), char_bytes=end - start))
        stream.clear()
        owner.clear()

    for k, unit in enumerate(units):
        if isinstance(unit, (bytes, bytearray)):
            stream.extend(unit)
            owner.extend([k] * len(unit))
            continue
        flush()
        if unit is None:
            pieces[k].append(Segment(text=specials[k], special=True))
        elif unit:
            pieces[k].append(Segment(text=unit))
    flush()
    return [TokenPiece(tuple(p)) for p in pieces]


def utf8_chars(data: bytes) -> list[tuple[int, int, str | None]]:
    """UTF-8 ``data`` as ``[(start, end, char), ...]`` covering every byte once; a byte that starts no valid
    character (a continuation byte on its own, a sequence cut off at the end) is its own run with char None."""
    out: list[tuple[int, int, str | None]] = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        length = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else (
            4 if b >> 3 == 0b11110 else 0
        )
        if length:
            try:
                out.append((i, i + length, data[i : i + length].decode("utf-8")))
                i += length
                continue
            except UnicodeDecodeError:
                pass
        out.append((i, i + 1, None))
        i += 1
    return out
