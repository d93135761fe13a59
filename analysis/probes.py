"""Probes of what a model trained on the Tang poems learned (torch in, numbers out).

* :func:`measure_poem_structure`: where the punctuation goes (p("，") after a line's 5th character, p("。")
  after its 10th), against the untrained initialisation.
* :func:`poem_slot_pairs` and :func:`head_slot_attention`: which heads look at the same slot of the previous
  line (13 tokens back in a 5-character poem, :data:`LINE_OFFSET_5`).

Pure with respect to the model: ``torch.no_grad``, the model's train/eval mode is restored afterwards.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import torch

from engine.model import CausalLM
from engine.seeding import seeded
from engine.tokenizer import load_corpus


# A 5-character line of the corpus: five characters, "，", five characters, "。" (then a newline).
_HAN5 = r"[^\s，。？！、：；《》・]{5}"
_LINE5 = re.compile(rf"({_HAN5})，({_HAN5})。")

#: Token distance between a position in a 5-character line and the same slot in the previous line, when every
#: character is one token: 5 chars + "，" + 5 chars + "。" = 12 tokens, plus the newline token = 13.
#: (The same slot in the previous HALF-line is 6 tokens back.)
LINE_OFFSET_5 = 13


@dataclass
class PoemStructure:
    """Result of :func:`measure_poem_structure` (probabilities in [0, 1], averaged over lines).

    Fields:
        comma_prob: mean p("，" | the line's first 5 characters and the preceding context).
        period_prob: mean p("。" | ... the 10th character).
        init_comma_prob, init_period_prob: the same for the baseline model (the untrained initialisation).
        uniform_prob: 1 / vocab_size, what a model that knows nothing would give.
        n_lines: number of lines averaged over.
        context_len: tokens of context fed for each line (the line and what precedes it in the corpus).
    """

    comma_prob: float
    period_prob: float
    init_comma_prob: float
    init_period_prob: float
    uniform_prob: float
    n_lines: int
    context_len: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _single_token(tokenizer, text: str) -> int:
    ids = tokenizer.encode(text)
    if len(ids) != 1:
        raise ValueError(f"{text!r} is not a single token for this tokenizer (encodes to {ids})")
    return ids[0]


def _aligned_poem_stream(tokenizer, text: str) -> tuple[list[int], list[tuple[int, int, int]]]:
    """Encode ``text`` and locate its 5-character lines in the token stream.

    Returns ``(ids, lines)`` where each entry of ``lines`` is ``(line_start, comma_pos, period_pos)``: token
    positions of the line's first token, of its "，" and of its "。". The text is encoded piece by piece
    (newline runs and lines separately, then the halves of each 5-character line) and the pieces are checked
    to concatenate to ``tokenizer.encode(text)``; a line whose halves merge with the punctuation is skipped.

    Raises:
        ValueError: "，" or "。" is not a single token, or the tokenizer merges across line breaks.
    """
    comma, period = _single_token(tokenizer, "，"), _single_token(tokenizer, "。")
    ids: list[int] = []
    lines: list[tuple[int, int, int]] = []
    for piece in re.split(r"(\n+)", text):
        if not piece:
            continue
        piece_ids = tokenizer.encode(piece)
        m = _LINE5.fullmatch(piece)
        if m:
            first, second = tokenizer.encode(m.group(1)), tokenizer.encode(m.group(2))
            if first + [comma] + second + [period] == piece_ids:
                start = len(ids)
                comma_pos = start + len(first)
                lines.append((start, comma_pos, comma_pos + 1 + len(second)))
        ids.extend(piece_ids)
    if ids != tokenizer.encode(text):
        raise ValueError("this tokenizer merges tokens across line breaks; poem lines cannot be located")
    return ids, lines


@torch.no_grad()
def _punctuation_probs(model: CausalLM, windows: torch.Tensor, comma_at: torch.Tensor, comma: int, period: int,
                       chunk: int = 64) -> tuple[float, float]:
    """Mean p(comma) at logits positions ``comma_at`` and p(period) at the last position of each window."""
    was_training = model.training
    model.eval()
    pc, pp = [], []
    for i in range(0, len(windows), chunk):
        w = windows[i:i + chunk].to(model.device)  # (n, C)
        probs = torch.softmax(model(w).logits.float(), dim=-1)  # (n, C, V)
        rows = torch.arange(len(w))
        pc.append(probs[rows, comma_at[i:i + chunk], comma])  # (n,)
        pp.append(probs[:, -1, period])  # (n,)
    model.train(was_training)
    return float(torch.cat(pc).mean()), float(torch.cat(pp).mean())


def measure_poem_structure(
    model: CausalLM,
    tokenizer,
    init_model: Optional[CausalLM] = None,
    context_len: int = 64,
    text: Optional[str] = None,
    max_lines: Optional[int] = None,
) -> PoemStructure:
    """How sure is the model that a 5-character line ends its first half with "，" and its second with "。"?

    For every line of the Tang-poem corpus of the form ``XXXXX，YYYYY。`` the model reads the corpus up to
    the 10th character (the last ``context_len`` tokens: the poem so far and whatever precedes it, exactly as
    in training windows) and we read off p("，") at the position of the 5th character and p("。") at the
    position of the 10th. Both are averaged over lines.

    Which lines: all such lines of the corpus (652 in ``tang_poems.txt``), i.e. mostly TRAINING lines. A
    held-out set is not practical here: the corpus is ordered by form and the last 10% (the validation split
    of ``train`` on ``"zh"``) holds only 3 such lines. The punctuation is a structural regularity, not a
    memorised fact, but read the numbers as "learned on the training text".

    Multi-character tokens: "，" and "。" must each be one token (true for :func:`engine.tokenizer.train_bpe`,
    whose pre-tokenizer isolates punctuation). The characters may merge into multi-character tokens (the
    model then predicts "，" after the token that ends the 5th character); a line whose characters merge with
    the punctuation is skipped. Characters outside the vocabulary are ``[UNK]`` tokens and count as characters.

    Args:
        model: the trained model.
        tokenizer: the tokenizer whose ids the model was trained on (``encode`` / ``vocab_size``).
        init_model: the baseline; pass the untrained model you cloned before training for the exact
            "before" numbers. None builds a fresh ``CausalLM(model.config)`` with seed 0.
        context_len: tokens per window (capped at the model's position limit); use the training ``seq_len``.
        text: the poem text (default ``load_corpus("zh")``).
        max_lines: use at most this many lines (the first ones), for speed.
    Returns:
        :class:`PoemStructure`.
    Raises:
        ValueError: no usable 5-character line, or "，"/"。" is not a single token.
    """
    if text is None:
        text = load_corpus("zh")
    if model.config.has_position_limit:
        context_len = min(context_len, model.config.max_position_embeddings)
    comma, period = _single_token(tokenizer, "，"), _single_token(tokenizer, "。")
    ids, lines = _aligned_poem_stream(tokenizer, text)
    stream = torch.tensor(ids, dtype=torch.long)
    windows, comma_at = [], []
    for _start, comma_pos, period_pos in lines:
        begin = period_pos - context_len  # the window is stream[begin : period_pos]; its last logits predict "。"
        if begin < 0:
            continue
        windows.append(stream[begin:period_pos])
        comma_at.append(comma_pos - 1 - begin)  # logits position that predicts "，"
        if max_lines is not None and len(windows) >= max_lines:
            break
    if not windows:
        raise ValueError("no 5-character poem line with enough context was found")
    W = torch.stack(windows)  # (n_lines, context_len)
    at = torch.tensor(comma_at)  # (n_lines,)
    if init_model is None:
        with seeded(0):
            init_model = CausalLM(model.config).to(model.device)
    c, p = _punctuation_probs(model, W, at, comma, period)
    c0, p0 = _punctuation_probs(init_model, W, at, comma, period)
    return PoemStructure(
        comma_prob=c, period_prob=p, init_comma_prob=c0, init_period_prob=p0,
        uniform_prob=1.0 / model.config.vocab_size, n_lines=len(windows), context_len=context_len,
    )


def poem_slot_pairs(tokenizer, n_tokens: int = 64, text: Optional[str] = None) -> tuple[list[int], list[tuple[int, int]]]:
    """A window of the Tang poems and its (query, key) pairs "same slot, previous line".

    Picks the ``n_tokens``-token window, starting at a poem title, that holds the most pairs. A pair is
    ``(p, p - 13)`` for each of the 12 slots (5 characters, "，", 5 characters, "。") of a 5-character line
    whose previous line, in the same poem, is also a 5-character line, and where both lines are exactly 12
    single-character tokens (so "same slot" is well defined). 13 = 12 tokens of the previous line plus its
    newline token (:data:`LINE_OFFSET_5`), not 12.

    Returns:
        ``(ids, pairs)``: ``n_tokens`` ids (fewer if the text is shorter) and positions within them.
    Raises:
        ValueError: as in :func:`measure_poem_structure`, or no pair exists.
    """
    if text is None:
        text = load_corpus("zh")
    ids, lines = _aligned_poem_stream(tokenizer, text)
    # consecutive 5-char lines, each 12 tokens, separated by exactly one newline token
    starts = [s for s, c, p in lines if c - s == 5 and p - c == 6]
    start_set = set(starts)
    keys = [s for s in starts if s - LINE_OFFSET_5 in start_set]  # line starts with a same-shape previous line
    if not keys:
        raise ValueError("no two consecutive single-character-token 5-character lines found")
    title = tokenizer.encode("《")
    title_starts = [i for i in range(len(ids)) if ids[i:i + len(title)] == title] or [0]
    best, best_pairs = 0, []
    for w0 in title_starts:
        pairs = [(s + j - w0, s + j - LINE_OFFSET_5 - w0) for s in keys if w0 <= s - LINE_OFFSET_5
                 and s + 12 <= w0 + n_tokens for j in range(12)]
        if len(pairs) > len(best_pairs):
            best, best_pairs = w0, pairs
    if not best_pairs:
        raise ValueError(f"no window of {n_tokens} tokens holds two consecutive 5-character lines")
    return ids[best:best + n_tokens], best_pairs


@torch.no_grad()
def head_slot_attention(
    model: CausalLM,
    ids: Union[Sequence[int], torch.Tensor],
    pairs: Optional[Sequence[tuple[int, int]]] = None,
    offset: int = LINE_OFFSET_5,
) -> list[tuple[int, int, float]]:
    """Mean attention weight from a position to "the same slot of the previous line", per layer and head.

    Args:
        model: the model (run in eval mode with ``output_attentions=True``; its mode is restored).
        ids: ``[T]`` or ``[B, T]`` token ids, e.g. the window from :func:`poem_slot_pairs`.
        pairs: ``(query, key)`` positions to average ``attention[query, key]`` over (and over the batch).
            None uses every ``(p, p - offset)`` with ``p >= offset``.
        offset: the distance when ``pairs`` is None. In a 5-character line ``白日依山尽，黄河入海流。`` followed by
            a newline, with one token per character, the same slot in the previous line is 13 tokens back
            (12 tokens of the line + 1 newline; :data:`LINE_OFFSET_5`); the previous half-line is 6 back.
    Returns:
        ``[(layer, head, score), ...]`` for every layer and head, in order; score in [0, 1]. Uniform causal
        attention would give about ``1 / (query + 1)`` per pair.
    Raises:
        ValueError: no pair, or a pair with ``key > query`` or outside ``[0, T)``.
    """
    x = torch.as_tensor(ids, dtype=torch.long)
    if x.dim() == 1:
        x = x[None]  # (1, T)
    T = x.shape[1]
    if pairs is None:
        pairs = [(p, p - offset) for p in range(offset, T)]
    pairs = list(pairs)
    if not pairs:
        raise ValueError(f"no (query, key) pair: the sequence of {T} tokens is not longer than offset={offset}")
    for q, k in pairs:
        if not (0 <= k <= q < T):
            raise ValueError(f"pair (query={q}, key={k}) must satisfy 0 <= key <= query < T={T}")
    was_training = model.training
    model.eval()
    attentions = model(x.to(model.device), output_attentions=True).attentions  # L x (B, n_heads, T, T)
    model.train(was_training)
    q_idx = torch.tensor([q for q, _ in pairs])
    k_idx = torch.tensor([k for _, k in pairs])
    out = []
    for layer, pattern in enumerate(attentions):
        score = pattern[:, :, q_idx, k_idx].float().mean(dim=(0, 2))  # (n_heads,)
        out.extend((layer, head, float(s)) for head, s in enumerate(score))
    return out


@torch.no_grad()
def stream_loss(model: CausalLM, ids: Union[Sequence[int], torch.Tensor], window: int) -> float:
    """Mean next-token loss (nats) over EVERY token of a stream but the first, each predicted once.

    The stream is read in windows of ``window`` tokens that overlap by one token (``ids[k(w-1) : k(w-1)+w]``),
    so each target is predicted once, from the tokens before it in its window (between 0 and ``window - 2``
    tokens of context). Eval mode, restored afterwards.
    """
    x = torch.as_tensor(ids, dtype=torch.long)
    if x.dim() != 1 or len(x) < 2 or window < 2:
        raise ValueError(f"need a 1-D stream of at least 2 tokens and window >= 2, got {tuple(x.shape)}, {window}")
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(x) - 1, window - 1):
        w = x[start:start + window][None].to(model.device)  # (1, <= window)
        logits = model(w).logits[0, :-1].float()  # (n - 1, V)
        total += float(torch.nn.functional.cross_entropy(logits, w[0, 1:], reduction="sum"))
        count += w.shape[1] - 1
    model.train(was_training)
    return total / count


def poem_model_metrics(model: CausalLM, tokenizer, heldout_text: str, window: int) -> dict:
    """What a model trained on the Tang poems learned, measured on text it never trained on.

    Returns a JSON-ready dict: ``heldout_loss`` (:func:`stream_loss` over ``heldout_text`` in windows of
    ``window`` tokens), ``ln_vocab`` (the loss of a uniform guess), ``heldout_tokens``, ``heldout_poems``
    (entries of ``heldout_text``, separated by blank lines), ``vocab_size``, ``num_parameters``, and
    :func:`measure_poem_structure` on ``heldout_text`` with 64 tokens of context (``comma_prob``,
    ``period_prob``, their values for the seed-0 initialisation, ``uniform_prob``, ``n_lines``, ``context_len``).
    """
    import math

    ids = tokenizer.encode(heldout_text)
    structure = measure_poem_structure(model, tokenizer, context_len=min(window, 64), text=heldout_text)
    entries = [e for e in heldout_text.split("\n\n") if e.strip()]
    return {"heldout_loss": stream_loss(model, ids, window), "ln_vocab": math.log(model.config.vocab_size),
            "heldout_tokens": len(ids), "heldout_poems": len(entries), "vocab_size": model.config.vocab_size,
            "num_parameters": model.num_parameters(), **structure.to_dict()}


SLOT_WINDOW = 64  # tokens of the poem window whose "same slot, previous line" attention is read


def poem_probe(trained: CausalLM, init: CausalLM, tokenizer, context_len: int,
               stream: Optional[Sequence[int]] = None) -> dict:
    """What the Training lab shows under "what the model learned about the poems", for a trained model and its
    untrained "before": :func:`measure_poem_structure` (trained vs ``init``), :func:`head_slot_attention` of both
    on the window of :func:`poem_slot_pairs`, and the share of "，" and "。" among all tokens of the poem stream
    (``freq``: what a model that only knows how common they are would predict everywhere). ``stream``: the poem
    corpus's ids if the caller has them (else encoded here). Returns ``{"error": "punct"}`` when "，"/"。" are not
    tokens of this vocabulary and ``{"error": message}`` when a probe cannot run."""
    from analysis.training import slot_attention_table

    comma, period = tokenizer.encode("，"), tokenizer.encode("。")
    unk = tokenizer.unk_token_id
    if len(comma) != 1 or len(period) != 1 or comma == period or unk in (comma[0], period[0]):
        return {"error": "punct"}
    ids = torch.as_tensor(stream if stream is not None else tokenizer.encode(load_corpus("zh")))
    freq = {"comma": float((ids == comma[0]).double().mean()), "period": float((ids == period[0]).double().mean())}
    try:
        ps = measure_poem_structure(trained, tokenizer, init_model=init, context_len=context_len)
        mc = trained.config
        window, pairs = poem_slot_pairs(
            tokenizer, n_tokens=min(SLOT_WINDOW, mc.max_position_embeddings) if mc.has_position_limit else SLOT_WINDOW)
        scores = head_slot_attention(trained, window, pairs)
        init_scores = head_slot_attention(init, window, pairs)
    except ValueError as err:
        return {"error": str(err)}
    return {
        "structure": ps.to_dict(),
        "freq": freq,
        "slots": slot_attention_table(scores),
        "init_slots": slot_attention_table(init_scores),
        "uniform_slot": sum(1.0 / (q + 1) for q, _ in pairs) / len(pairs),
        "slot": slot_head(scores, init_scores, pairs),  # the top head, and whether it stands out
        "n_pairs": len(pairs),
        "window": tokenizer.decode(window),
    }


def bundled_poem_probe(trained: CausalLM, init: CausalLM, *, vocab_size: int, context_len: int) -> dict:
    """:func:`poem_probe` with the app's bundled tokenizer at ``vocab_size`` (what a Training-lab run trains on):
    picklable by name, so a run's own process can measure it as soon as its steps end."""
    from engine.tokenizer import bundled_tokenizer

    return poem_probe(trained, init, bundled_tokenizer(vocab_size), context_len)


def poem_probe_tokens(context_len: int, text: Optional[str] = None) -> int:
    """Forward tokens :func:`poem_probe` runs (both models): a window of ``context_len`` tokens per 5-character
    line of the poems and the slot window; an estimate of its cost before it runs (a line that merges with its
    punctuation or lacks context is skipped by the probe and still counted here)."""
    n_lines = len(_LINE5.findall(text if text is not None else load_corpus("zh")))
    return 2 * (n_lines * context_len + SLOT_WINDOW)


def punctuation_verdict(comma_prob: float, period_prob: float, freq_comma: float, freq_period: float,
                        init_comma: float, init_period: float, uniform: float) -> str:
    """What :func:`measure_poem_structure`'s numbers say, in one word (the Training lab's sentence and lesson 5):

    * ``"learned"``: both marks more than twice as likely as their share of the poem tokens (``freq_*``): the
      model knows WHERE in the line they go, not only how common they are;
    * ``"frequency"``: both more than 10 times the untrained model's and the uniform guess's: it learned how
      common they are;
    * ``"not_yet"``: neither.
    """
    if comma_prob > 2 * freq_comma and period_prob > 2 * freq_period:
        return "learned"
    if min(comma_prob, period_prob) > 10 * max(init_comma, init_period, uniform):
        return "frequency"
    return "not_yet"


def slot_head(scores: Sequence[tuple[int, int, float]], init_scores: Sequence[tuple[int, int, float]],
              pairs: Sequence[tuple[int, int]]) -> dict:
    """The head that looks most at "the same slot of the previous line" (:func:`head_slot_attention` of the
    trained model, ``scores``, and of the untrained one, ``init_scores``, on the same ``pairs``), and whether it
    stands out: its score above twice uniform causal attention's (the mean of 1 / (query + 1) over the pairs)
    and above twice the untrained model's best.

    Returns ``{"layer", "head"}`` (0-based), ``"score"``, ``"uniform"``, ``"init_best"``, ``"stands_out"``.
    """
    layer, head, score = max(scores, key=lambda r: (r[2], -r[0], -r[1]))
    uniform = float(sum(1.0 / (q + 1) for q, _ in pairs) / len(pairs))
    init_best = float(max(r[2] for r in init_scores))
    return {"layer": int(layer), "head": int(head), "score": float(score), "uniform": uniform,
            "init_best": init_best, "stands_out": bool(score > 2 * uniform and score > 2 * init_best)}
