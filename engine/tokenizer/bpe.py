"""Training BPE tokenizers on the bundled corpus: a character-level BPE (:func:`train_bpe`), a GPT-2-style
byte-level BPE (:func:`train_byte_level_bpe`), and the one the app pairs with a slider-built model
(:func:`bundled_tokenizer`). Both trainings are deterministic and cached per arguments.

References
----------
* R. Sennrich, B. Haddow, A. Birch, "Neural Machine Translation of Rare Words with
  Subword Units", ACL 2016 (arXiv:1508.07909) -- byte-pair encoding (BPE) for subwords.
* A. Radford et al., "Language Models are Unsupervised Multitask Learners" (GPT-2), 2019
  -- byte-level BPE and its byte-to-unicode table (``Ġ`` for a space, ``Ċ`` for a newline).
* Hugging Face ``tokenizers`` library (https://github.com/huggingface/tokenizers,
  https://huggingface.co/docs/tokenizers) -- the BPE model, trainer, pre-tokenizers and
  decoders used here; ``tokenizer.json`` is its serialisation format.
"""

from __future__ import annotations

import functools
from collections import Counter

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from .corpus import CORPUS_FILES, load_corpus
from .text import TextTokenizer


UNK_TOKEN = "[UNK]"

#: Smallest vocabulary :func:`train_bpe` accepts: the ``[UNK]`` token plus one character.
MIN_VOCAB_SIZE = 2


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
