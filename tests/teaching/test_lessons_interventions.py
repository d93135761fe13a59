"""Lesson 6's answer keys (teaching/answers/interventions.py) on SmolLM2 against an independent computation: a
copy of the model whose head's ``o_proj`` input columns are zero (the head removed), a forward pre-hook on a block
that replaces its input at one position (the residual stream patched), and the losses and logit differences by
hand (never the engine's interventions)."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from analysis.heads import induction_scores, previous_token_scores, repeated_random_tokens
from teaching.answers.core import REGISTRY, StepInputs
from analysis.tokenizers import special_ids
from teaching.lessons import build_parts

pytestmark = [pytest.mark.smollm2]
SETTINGS = {"model.source": "checkpoint", "model.checkpoint": "smollm2-135m", "interv.experiment": "induction"}
N = 24


@pytest.fixture(scope="module")
def inputs():
    s = StepInputs(SETTINGS, lambda: build_parts(SETTINGS))
    _ = s.model
    return s


def _loss(model, ids) -> float:
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, N:2 * N - 1].double(), -1)
    return float(-logp[torch.arange(N - 1), ids[0, N + 1:]].mean())


def _without(model, heads):
    m = copy.deepcopy(model)
    hd = m.config.head_dim if getattr(m.config, "head_dim", None) else m.config.hidden_size // m.config.num_attention_heads
    with torch.no_grad():
        for layer, head in heads:
            m.layers[layer].self_attn.o_proj.weight[:, head * hd:(head + 1) * hd] = 0
    return m


@pytest.fixture(scope="module")
def reference(inputs):
    model, tok = inputs.model, inputs.tokenizer
    ids = repeated_random_tokens(model.config.vocab_size, N, seed=0, exclude=special_ids(tok))
    with torch.no_grad():
        att = model(ids, output_attentions=True).attentions
    prev, ind = previous_token_scores(att), induction_scores(att, N)
    p, i = divmod(int(prev.argmax()), prev.shape[1]), divmod(int(ind.argmax()), ind.shape[1])
    base = _loss(model, ids)
    return {"p": p, "i": i, "base": base, "pr": _loss(_without(model, [p]), ids) - base,
            "ir": _loss(_without(model, [i]), ids) - base, "both": _loss(_without(model, [p, i]), ids) - base}


def test_the_circuit_keys(inputs, reference):
    r = reference
    assert r["p"] == (16, 0) and r["i"] == (18, 6)  # layer 17 head 1 and layer 19 head 7 on the page
    winner = REGISTRY["interv_circuit_winner"](inputs)
    assert r["pr"] > 2 * r["ir"] > 0  # the finding of issue 25: several times larger
    assert winner.correct["en"] == "layer 17, head 1 (previous-token head)"
    assert winner.values["pr"] == pytest.approx(r["pr"], abs=0.01)
    assert winner.values["ir"] == pytest.approx(r["ir"], abs=0.01)
    base = REGISTRY["interv_base_loss"](inputs)
    assert base.correct == pytest.approx(r["base"], abs=0.01)
    assert base.values["uniform"] == pytest.approx(math.log(49152), abs=0.01)
    pair = REGISTRY["interv_pair_vs_sum"](inputs)
    total = r["pr"] + r["ir"]
    want = "about" if abs(r["both"] - total) <= 0.15 * total else "more" if r["both"] > total else "less"
    assert pair.correct["en"].startswith(want) and pair.values["both"] == pytest.approx(r["both"], abs=0.01)
    # separated: the ratio both / sum sits inside its range, each rival scored by its distance to the boundary
    ratio = r["both"] / total
    assert pair.scores[0] == 0 and max(pair.scores[1:]) == pytest.approx(-min(ratio - 0.85, 1.15 - ratio), abs=1e-6)


def test_the_facts_keys(inputs):
    model, tok = inputs.model, inputs.tokenizer
    clean, corrupt = (torch.tensor([tok.encode(s)]) for s in ("The capital of France is", "The capital of Italy is"))
    paris, rome = tok.encode(" Paris")[0], tok.encode(" Rome")[0]
    with torch.no_grad():
        hidden = model(clean, output_hidden_states=True).hidden_states

        def diff(layer=None, pos=None) -> float:
            handle = None
            if layer is not None:
                def patch(_m, args):
                    x = args[0].clone()
                    x[:, pos] = hidden[layer][:, pos]
                    return (x, *args[1:])
                handle = model.layers[layer].register_forward_pre_hook(patch)
            try:
                logits = model(corrupt).logits[0, -1]
            finally:
                if handle is not None:
                    handle.remove()
            return float(logits[paris] - logits[rome])

        d_clean = float(model(clean).logits[0, -1, paris] - model(clean).logits[0, -1, rome])
        d_corrupt = diff()
        restored = lambda d: (d - d_corrupt) / (d_clean - d_corrupt)  # noqa: E731
        T, L = clean.shape[1], model.config.num_hidden_layers
        first = [restored(diff(0, p)) for p in range(T)]
        last = [restored(diff(layer, T - 1)) for layer in range(L)]
    early = REGISTRY["interv_facts_early_position"](inputs)
    best = max(range(T), key=lambda p: first[p])
    assert best == 3 and early.correct["en"] == "“ France” (position 3)"
    assert early.values["restored"] == pytest.approx(first[best], abs=0.01)
    key = REGISTRY["interv_facts_last_from"](inputs)
    assert key.correct == next(layer for layer in range(L) if last[layer] >= 0.5) + 1
    assert key.values["restored"] == pytest.approx(last[key.correct - 1], abs=0.01)
