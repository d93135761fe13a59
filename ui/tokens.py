"""Naming a token in a sentence, in the reader's language, by the one display rule
(``engine.tokenizer.pieces.token_pieces``): a whole token is quoted (“床”); bytes that are no whole character are
never quoted as if they were one, they are described ("2 of the 3 bytes of 床", "“床”3 个字节中的 2 个").
"""

from __future__ import annotations

from engine.tokenizer.pieces import TokenPiece, byte_notation, visible_char
from ui.escape import md
from ui.i18n import t


def label(piece: TokenPiece | str) -> str:
    """The display string of a token (``#id`` strings pass through)."""
    return piece.label if isinstance(piece, TokenPiece) else piece


def phrase(piece: TokenPiece | str) -> str:
    """Markdown naming one token in a sentence: ``“床”`` for whole characters (or a special token, or ``#id``);
    for each run of bytes that is no whole character, how many of which character's bytes it holds."""
    if not isinstance(piece, TokenPiece):
        return t("tok.quoted", text=md(piece))
    if piece.whole:
        return t("tok.quoted", text=md(piece.label))
    parts = []
    for s in piece.segments:
        if not s.data:
            parts.append(t("tok.quoted", text=md(s.label)))
        elif s.char is None:
            parts.append(t("tok.bytes_only", bytes=md(byte_notation(s.data))))
        else:
            parts.append(t("tok.bytes_of", n=len(s.data), total=s.char_bytes, char=md(visible_char(s.char))))
    return t("tok.and").join(parts)


def text(pieces) -> str:
    """The text of a sequence of pieces (``Explorer.token_pieces``) by the same rule: a character split over tokens
    written once, on the token that completes it; bytes of no whole character as ``‹E5›``; an unknown id or a
    random id as ``[#id]`` (random-id input, all ``#id``: the ids separated by spaces). Never U+FFFD (which
    ``tokenizer.decode`` writes for a cut character)."""
    if pieces and all(isinstance(p, str) for p in pieces):
        return " ".join(pieces)
    return "".join(p.text if isinstance(p, TokenPiece) else f"[{p}]" for p in pieces)
