"""The four norm placements on one model's weights (analysis/prepost.py), against a hand-written block.

Reference: each block recomputed here from the residual stream entering it, with attention, the feed-forward and
LayerNorm written out in torch (no module of the engine called), wired as the papers and transformers write them:

* Pre-Norm (GPT-2, Llama):          m = x + A(N1(x));       y = m + F(N2(m))
* Post-Norm (Vaswani et al. 2017):  m = N1(x + A(x));       y = N2(m + F(m))
* Sandwich (Gemma2DecoderLayer):    m = x + Na(A(N1(x)));   y = m + Nf(F(N2(m)))
* OLMo-2 (Olmo2DecoderLayer):       m = x + Na(A(x));       y = m + Nf(F(m))

N1/N2 are the norms before attention / before the feed-forward (Post-Norm's two norms, matched with Pre-Norm's
by name), Na/Nf the norms on attention's / the feed-forward's output; a norm the source model lacks is the identity
scale (weight 1, bias 0).
"""

from __future__ import annotations

import math

import pytest
import torch

from analysis.prepost import (NORM_SLOTS, PLACEMENTS, last_block_gradient_by_depth, norm_placement_pair,
                              norms_at_init, placement_comparison, placement_models)
from engine import CausalLM, ModelConfig
from engine.model import NORM_PLACEMENTS

CONFIG = ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, intermediate_size=40,
                     hidden_act="gelu", norm_type="layernorm", position_embedding="learned",
                     max_position_embeddings=32, bias=True, tie_word_embeddings=True)
# Which norm of each placement is N1, N2, Na, Nf of the docstring (transformers' names), written here from the
# formulas above, not read from analysis.prepost
ROLES = {"pre": {"input_layernorm": "N1", "post_attention_layernorm": "N2"},
         "post": {"input_layernorm": "N1", "post_attention_layernorm": "N2"},
         "sandwich": {"input_layernorm": "N1", "post_attention_layernorm": "Na", "pre_feedforward_layernorm": "N2",
                      "post_feedforward_layernorm": "Nf"},
         "post_sublayer": {"post_attention_layernorm": "Na", "post_feedforward_layernorm": "Nf"}}


def source_model(placement: str, seed: int = 0) -> CausalLM:
    """A model of ``placement`` whose norms are not at init (random weights and biases), so a norm shared in the
    wrong slot, or a fresh norm that is not at init, changes the numbers."""
    torch.manual_seed(seed)
    model = CausalLM(CONFIG.replace(norm_position=placement))
    with torch.no_grad():
        for layer in model.layers:
            for name in layer.norm_names:
                norm = getattr(layer, name)
                norm.weight.copy_(1 + 0.5 * torch.randn_like(norm.weight))
                norm.bias.copy_(0.3 * torch.randn_like(norm.bias))
    return model


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def attention(x, p: dict, n_heads: int):
    """Causal multi-head attention written out: ``[T, H] -> [T, H]``."""
    T, H = x.shape
    hd = H // n_heads
    q, k, v = ((x @ p[f"self_attn.{n}_proj.weight"].T + p[f"self_attn.{n}_proj.bias"]).view(T, n_heads, hd)
               .transpose(0, 1) for n in "qkv")  # (nh, T, hd)
    scores = q @ k.transpose(1, 2) / math.sqrt(hd)  # (nh, T, T)
    scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    z = (scores.softmax(-1) @ v).transpose(0, 1).reshape(T, H)  # (T, H)
    return z @ p["self_attn.o_proj.weight"].T + p["self_attn.o_proj.bias"]


def feed_forward(x, p: dict):
    h = torch.nn.functional.gelu(x @ p["mlp.up_proj.weight"].T + p["mlp.up_proj.bias"])
    return h @ p["mlp.down_proj.weight"].T + p["mlp.down_proj.bias"]


def reference_block(x, source: CausalLM, i: int, placement: str):
    """Block ``i`` of ``source``'s weights wired as ``placement``, on ``x`` ``[T, H]`` (float64)."""
    layer = source.layers[i]
    p = {k: v.detach().double() for k, v in layer.state_dict().items()}
    have = {role: name for name, role in ROLES[source.config.norm_position].items()}
    eps = source.config.norm_eps

    def norm(role):
        name = have.get(role)
        if name is None:  # the source has no norm there: the twin's starts at init
            return lambda h: layer_norm(h, 1.0, 0.0, eps)
        return lambda h: layer_norm(h, p[f"{name}.weight"], p[f"{name}.bias"], eps)

    A = lambda h: attention(h, p, source.config.num_attention_heads)  # noqa: E731
    F = lambda h: feed_forward(h, p)  # noqa: E731
    n1, n2, na, nf = norm("N1"), norm("N2"), norm("Na"), norm("Nf")
    if placement == "pre":
        m = x + A(n1(x))
        return m + F(n2(m))
    if placement == "post":
        m = n1(x + A(x))
        return n2(m + F(m))
    if placement == "sandwich":
        m = x + na(A(n1(x)))
        return m + nf(F(n2(m)))
    m = x + na(A(x))
    return m + nf(F(m))


def reference_stream(source: CausalLM, ids: torch.Tensor, placement: str) -> list[torch.Tensor]:
    """The residual stream (embedding, then after each block), ``[T, H]`` float64 each, by :func:`reference_block`."""
    x = (source.embed_tokens.weight[ids[0]] + source.embed_positions.weight[: ids.shape[1]]).detach().double()
    stream = [x]
    for i in range(len(source.layers)):
        stream.append(reference_block(stream[-1], source, i, placement))
    return stream


def test_slots_name_exactly_the_engines_norms():
    assert set(NORM_SLOTS) == set(NORM_PLACEMENTS) == set(PLACEMENTS) == set(ROLES)
    for placement, (norms, _) in NORM_PLACEMENTS.items():
        assert set(NORM_SLOTS[placement]) == set(norms) == set(ROLES[placement]), placement
        assert len(set(NORM_SLOTS[placement].values())) == len(norms)  # one norm per slot
    assert norms_at_init("pre", "sandwich") == ("post_attention_layernorm", "post_feedforward_layernorm")
    assert norms_at_init("pre", "post_sublayer") == ("post_attention_layernorm", "post_feedforward_layernorm")
    assert norms_at_init("post_sublayer", "pre") == ("input_layernorm", "post_attention_layernorm")
    assert norms_at_init("post_sublayer", "sandwich") == ("input_layernorm", "pre_feedforward_layernorm")
    assert all(norms_at_init("sandwich", p) == () for p in PLACEMENTS)
    assert norms_at_init("pre", "post") == norms_at_init("post", "pre") == ()


@pytest.mark.parametrize("own", PLACEMENTS)
def test_every_placement_matches_the_hand_written_blocks(own):
    source = source_model(own)
    before = {k: v.clone() for k, v in source.state_dict().items()}
    ids = torch.randint(0, CONFIG.vocab_size, (1, 7), generator=torch.Generator().manual_seed(1))
    models = placement_models(source)
    assert list(models) == [own, *(p for p in PLACEMENTS if p != own)]  # the model's own placement first
    assert models[own] is source
    for placement, model in models.items():
        assert model.config.norm_position == placement and not model.training
        with torch.no_grad():
            out = model(ids, output_activations=True).activations
        want = reference_stream(source, ids, placement)
        for i in range(CONFIG.num_hidden_layers):
            got = out[f"blocks.{i}.hook_resid_post"][0].double()
            torch.testing.assert_close(got, want[i + 1], rtol=1e-4, atol=1e-5, msg=f"{own} -> {placement}, block {i}")
    for k, v in source.state_dict().items():  # the source model is never changed
        assert torch.equal(v, before[k]), k


@pytest.mark.parametrize("own", ["pre", "post_sublayer"])
def test_twins_share_every_common_tensor_and_start_missing_norms_at_init(own):
    source = source_model(own)
    mine = source.state_dict()
    storage = {v.data_ptr() for v in mine.values()}
    for placement, twin in placement_models(source).items():
        assert twin.lm_head.weight is twin.embed_tokens.weight  # a tied head stays one Parameter
        fresh = norms_at_init(own, placement)
        have = {role: name for name, role in ROLES[own].items()}
        for key, value in twin.state_dict().items():
            parts = key.split(".")
            if parts[0] == "layers" and parts[2] in ROLES[placement]:
                if ROLES[placement][parts[2]] not in have:  # at init: weight 1, bias 0, in storage of its own
                    assert parts[2] in fresh
                    assert torch.equal(value, torch.ones_like(value) if parts[3] == "weight" else torch.zeros_like(value))
                    assert value.data_ptr() not in storage
                    continue
                key = f"layers.{parts[1]}.{have[ROLES[placement][parts[2]]]}.{parts[3]}"
            assert value.data_ptr() == mine[key].data_ptr(), (placement, key)  # the very same tensor


def test_gemma_norms_start_at_scale_one_and_equal_an_independent_build():
    """Gemma's RMSNorm scales by 1 + w: a fresh one has w = 0. With the model at init, each twin equals a model of
    that placement built from the same seed (norm init draws no random numbers)."""
    config = CONFIG.replace(norm_type="gemma_rmsnorm", bias=False, position_embedding="rope")
    torch.manual_seed(3)
    source = CausalLM(config)
    ids = torch.randint(0, config.vocab_size, (1, 9), generator=torch.Generator().manual_seed(2))
    twins = placement_models(source)
    assert torch.equal(twins["sandwich"].layers[0].post_feedforward_layernorm.weight, torch.zeros(config.hidden_size))
    for placement, twin in twins.items():
        torch.manual_seed(3)
        independent = CausalLM(config.replace(norm_position=placement))
        with torch.no_grad():
            torch.testing.assert_close(twin(ids).logits, independent(ids).logits, rtol=0, atol=0)


def test_comparison_frames_against_the_reference():
    source = source_model("sandwich")
    ids = torch.randint(0, CONFIG.vocab_size, (1, 6), generator=torch.Generator().manual_seed(4))
    norms, drift = placement_comparison(placement_models(source), ids)
    assert list(norms.columns) == ["depth", "sandwich_norm", "pre_norm", "post_norm", "post_sublayer_norm"]
    assert list(norms["depth"]) == list(range(CONFIG.num_hidden_layers + 1))
    streams = {p: reference_stream(source, ids, p) for p in PLACEMENTS}
    for p, stream in streams.items():
        want = [float(h.norm(dim=-1).mean()) for h in stream]
        assert norms[f"{p}_norm"].tolist() == pytest.approx(want, rel=1e-5)
    assert sorted(set(drift["placement"])) == ["post", "post_sublayer", "pre"]  # the reference has no rows
    for p in ("pre", "post", "post_sublayer"):
        rows = drift[drift["placement"] == p].sort_values("depth")
        ref, other = streams["sandwich"], streams[p]
        cos = [float(torch.nn.functional.cosine_similarity(b, a, dim=-1).mean()) for a, b in zip(ref, other)]
        rel = [float(((b - a).norm(dim=-1) / a.norm(dim=-1)).mean()) for a, b in zip(ref, other)]
        assert rows["cosine"].tolist() == pytest.approx(cos, rel=1e-5, abs=1e-6)
        assert rows["rel_l2"].tolist() == pytest.approx(rel, rel=1e-4, abs=1e-6)
        assert rows["cosine"].iloc[0] == pytest.approx(1.0) and rows["rel_l2"].iloc[0] == pytest.approx(0.0)


def test_last_block_gradient_of_every_placement_against_backward():
    config = CONFIG.replace(norm_position="post_sublayer")
    ids = torch.randint(0, config.vocab_size, (1, 8), generator=torch.Generator().manual_seed(5))
    df = last_block_gradient_by_depth(config, 7, ids, [2, 4], placements=PLACEMENTS)
    assert list(df["placement"][:4]) == ["post_sublayer", "pre", "post", "sandwich"]
    for L in (2, 4):
        for p in PLACEMENTS:
            torch.manual_seed(7)  # built independently: the same seed under each placement
            model = CausalLM(config.replace(num_hidden_layers=L, norm_position=p))
            model(ids, labels=ids).loss.backward()
            want = math.sqrt(sum(float((q.grad.double() ** 2).sum()) for q in model.layers[-1].parameters()))
            got = df[(df["layers"] == L) & (df["placement"] == p)]["grad_norm"].item()
            assert got == pytest.approx(want, rel=1e-4), (L, p)


def test_pair_keeps_its_meaning():
    """``norm_placement_pair`` (the lessons' answer functions) is still (pre, post), the model one of them."""
    torch.manual_seed(0)
    model = CausalLM(CONFIG.replace(norm_position="post"))
    pre, post = norm_placement_pair(model)
    assert post is model and pre.config.norm_position == "pre"
    assert all(a.data_ptr() == b.data_ptr() for a, b in zip(pre.state_dict().values(), model.state_dict().values()))
