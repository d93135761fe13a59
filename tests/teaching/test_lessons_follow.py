"""The Follow a token steps' keys (teaching/answers/follow.py) against an independent computation on a small random
Pre-Norm model: the depth from the lens computed here by hand (final norm and head on every residual state), the
largest share from W_U[t] . (g * term) / rms(x_L) written out here; and the keys move with the followed position."""

from __future__ import annotations

import pytest
import torch

from engine import CausalLM, ModelConfig
from teaching.answers.core import StepInputs
from teaching.lessons import REGISTRY  # importing the lessons registers every answer function


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(3)
    cfg = ModelConfig(vocab_size=60, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32,
                      norm_type="rmsnorm", position_embedding="rope", initializer_range=0.4, tie_word_embeddings=False)
    model = CausalLM(cfg)
    ids = torch.randint(0, 60, (1, 8))
    return model, ids


def inputs(model, ids, **settings) -> StepInputs:
    return StepInputs(settings, lambda: (model.config, model, ids, [f"#{i}" for i in ids[0].tolist()], None))


def by_hand(model, ids, position):
    """The residual states of ``position`` in order (embedding, then per block after attention and after the FFN), the
    attention and FFN outputs, and the model's answer; from an ordinary forward with activations."""
    with torch.no_grad():
        out = model(ids, output_activations=True)
    a = out.activations
    L = model.config.num_hidden_layers
    states = [(0, a["blocks.0.hook_resid_pre"][0, position])]
    for i in range(L):
        states += [(i + 1, a[f"blocks.{i}.hook_resid_mid"][0, position]), (i + 1, a[f"blocks.{i}.hook_resid_post"][0, position])]
    return out, states


def test_follow_depth(small):
    model, ids = small
    for position in (7, 3):
        out, states = by_hand(model, ids, position)
        answer = int(out.logits[0, position].argmax())
        with torch.no_grad():
            tops = [int(model.lm_head(model.norm(x)).argmax()) for _, x in states]
        k = len(tops)
        while k > 0 and tops[k - 1] == answer:
            k -= 1
        expected = states[k][0] if k < len(tops) else model.config.num_hidden_layers
        got = REGISTRY["follow_depth"](inputs(model, ids, **{"follow.position": position}))
        assert got.correct == expected, position
        assert expected not in got.distractors


def test_follow_top_part(small):
    model, ids = small
    L = model.config.num_hidden_layers
    for position in (7, 2):
        out, _ = by_hand(model, ids, position)
        a = out.activations
        token = int(out.logits[0, position].argmax())
        x = a[f"blocks.{L - 1}.hook_resid_post"][0, position].double()
        scale = 1 / torch.sqrt(x.pow(2).mean() + model.norm.eps)
        read = model.lm_head.weight[token].double() * model.norm.weight.double() * scale
        shares = {("embed", 0): float(read @ a["hook_embed"][0, position].double())}
        for i in range(L):
            shares[("attn", i)] = float(read @ a[f"blocks.{i}.hook_attn_out"][0, position].double())
            shares[("mlp", i)] = float(read @ a[f"blocks.{i}.hook_mlp_out"][0, position].double())
        assert sum(shares.values()) == pytest.approx(float(out.logits[0, position, token]), rel=1e-4)
        best_kind, best_layer = max(shares, key=shares.get)
        got = REGISTRY["follow_top_part"](inputs(model, ids, **{"follow.position": position}))
        names = {"embed": "the embedding", "attn": "block {}'s attention", "mlp": "block {}'s FFN"}
        assert got.correct["en"] == names[best_kind].format(best_layer + 1), position
        assert got.scores[0] == pytest.approx(shares[best_kind, best_layer], rel=1e-5)
