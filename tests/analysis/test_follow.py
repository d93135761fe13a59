"""analysis.follow against independent references: a hand-made two-layer model whose every number is worked out
below from the formulas (math, not the engine); the attribution's sum on every placement and norm; and SmolLM2
against transformers' own forward with hooks (per-sub-step residuals at the followed position, the lens tokens)."""

from __future__ import annotations

import math

import pytest
import torch

from analysis.follow import (BLOCK_STEPS, attribution_defined, first_top_step, follow_steps, logit_attribution,
                             summed)
from analysis.trace import run_trace
from engine import CausalLM, ModelConfig

E = [[1.0, 0.0], [0.0, 1.0], [0.5, 2.0], [-1.0, 0.5]]  # the token embeddings (and the tied head), V = 4, H = 2
EPS = 1e-6


@pytest.fixture(scope="module")
def hand():
    """Two layers, one head, RMSNorm (gain 1), no positions, no biases. Layer 1: q = k = 0 (even attention), v = o =
    identity, FFN relu(up x) with up = down = identity. Layer 2: every weight 0 (it changes nothing). Input ids
    [0, 1]; the followed position is 1."""
    cfg = ModelConfig(vocab_size=4, hidden_size=2, num_hidden_layers=2, num_attention_heads=1, intermediate_size=2,
                      hidden_act="relu", norm_type="rmsnorm", norm_position="pre", position_embedding="none",
                      bias=False, tie_word_embeddings=True, norm_eps=EPS)
    model = CausalLM(cfg)
    with torch.no_grad():
        model.embed_tokens.weight.copy_(torch.tensor(E))
        eye = torch.eye(2)
        for i, block in enumerate(model.layers):
            a, m = block.self_attn, block.mlp
            for w, value in ((a.q_proj, 0), (a.k_proj, 0), (a.v_proj, eye), (a.o_proj, eye), (m.up_proj, eye),
                             (m.down_proj, eye)):
                w.weight.copy_(value * eye if i == 0 else torch.zeros(2, 2))
    ids = torch.tensor([[0, 1]])
    out = run_trace(model, ids)
    return model, out


def rms_normed(x):
    r = math.sqrt(sum(v * v for v in x) / len(x) + EPS)
    return [v / r for v in x]


def by_hand():
    """Every vector of position 1, from the formulas."""
    x0, x1 = E[0], E[1]
    n0, n1 = rms_normed(x0), rms_normed(x1)  # input_layernorm of both positions
    attn = [(a + b) / 2 for a, b in zip(n0, n1)]  # q = k = 0: weight 1/2 on keys 0 and 1; v = o = identity
    mid = [a + b for a, b in zip(x1, attn)]
    n_mid = rms_normed(mid)
    mlp = [max(v, 0.0) for v in n_mid]  # down(relu(up(x))) with identities
    post = [a + b for a, b in zip(mid, mlp)]
    final = rms_normed(post)
    return dict(x1=x1, n1=n1, attn=attn, mid=mid, n_mid=n_mid, mlp=mlp, post=post, final=final)


def norm(v):
    return math.sqrt(sum(a * a for a in v))


def lens_ids(x):
    logits = [sum(e * f for e, f in zip(row, rms_normed(x))) for row in E]
    return sorted(range(4), key=lambda i: -logits[i])


def test_hand_made_model_every_number(hand):
    model, out = hand
    steps = follow_steps(model, out, 1, top=4, top_keys=2)
    h = by_hand()
    assert list(steps["kind"]) == ["embed"] + [k for _ in range(2) for k, *_ in BLOCK_STEPS["pre"]] + \
        ["ln_final", "logits"]
    rows = steps.set_index("step")
    expect_norms = [h["x1"], h["n1"], h["attn"], h["mid"], h["n_mid"], h["mlp"], h["post"],
                    rms_normed(h["post"]), [0, 0], h["post"], rms_normed(h["post"]), [0, 0], h["post"], h["final"]]
    for i, v in enumerate(expect_norms):
        assert rows.loc[i, "norm"] == pytest.approx(norm(v), rel=1e-6, abs=1e-9), i
    # the stream's norm after each row, and what the two sub-layers of block 1 did to it
    stream = [h["x1"]] * 3 + [h["mid"]] * 3 + [h["post"]] * 9
    for i in range(15):
        assert rows.loc[i, "resid_norm"] == pytest.approx(norm(stream[i]), rel=1e-6), i
    d_attn = norm(h["attn"]) / norm(h["x1"])
    cos_attn = sum(a * b for a, b in zip(h["x1"], h["mid"])) / (norm(h["x1"]) * norm(h["mid"]))
    assert rows.loc[3, "delta_ratio"] == pytest.approx(d_attn, rel=1e-6)
    assert rows.loc[3, "cosine"] == pytest.approx(cos_attn, rel=1e-6)
    d_mlp = norm(h["mlp"]) / norm(h["mid"])
    assert rows.loc[6, "delta_ratio"] == pytest.approx(d_mlp, rel=1e-6)
    assert rows.loc[6, "cosine"] == pytest.approx(
        sum(a * b for a, b in zip(h["mid"], h["post"])) / (norm(h["mid"]) * norm(h["post"])), rel=1e-6)
    # block 2 writes zeros: no change, cosine 1
    assert rows.loc[9, "delta_ratio"] == pytest.approx(0.0, abs=1e-9) and rows.loc[9, "cosine"] == pytest.approx(1.0)
    # attention of position 1 in block 1: half on each key
    assert sorted(rows.loc[2, "keys"]) == [0, 1] and rows.loc[2, "key_weights"] == pytest.approx([0.5, 0.5])
    # the lens on the stream rows, and the model's own output on the last row
    stream_rows = {0: h["x1"], 3: h["mid"], 6: h["post"], 9: h["post"], 12: h["post"]}  # block 2 adds nothing
    for i, x in stream_rows.items():
        assert rows.loc[i, "top_ids"] == lens_ids(x), i
    assert rows.loc[14, "top_ids"] == lens_ids(h["post"])
    final = lens_ids(h["post"])[0]
    tops = [(i, lens_ids(x)[0]) for i, x in stream_rows.items()] + [(14, final)]
    expected = next(i for k, (i, _) in enumerate(tops) if all(top == final for _, top in tops[k:]))
    assert first_top_step(steps) == expected


def test_hand_made_model_attribution(hand):
    """logit_t = E[t] . (x_L / rms(x_L)) with x_L = embedding + attention + FFN (block 2 adds 0): each term's share
    is E[t] . term / rms(x_L)."""
    model, out = hand
    h = by_hand()
    rms = math.sqrt(sum(v * v for v in h["post"]) / 2 + EPS)
    for t in range(4):
        attr = logit_attribution(model, out, 1, t, by_head=True)
        tab = attr.table.set_index(["component", "layer", "head"])["contribution"]
        dot = lambda v: sum(e * f for e, f in zip(E[t], v)) / rms  # noqa: E731
        assert attr.scale == pytest.approx(1 / rms, rel=1e-6)  # the stream is float32
        assert tab[("embed", -1, -1)] == pytest.approx(dot(h["x1"]), rel=1e-6, abs=1e-9)
        assert tab[("attn", 0, -1)] == pytest.approx(dot(h["attn"]), rel=1e-6, abs=1e-9)
        assert tab[("head", 0, 0)] == pytest.approx(dot(h["attn"]), rel=1e-6, abs=1e-9)  # the one head is all of it
        assert tab[("mlp", 0, -1)] == pytest.approx(dot(h["mlp"]), rel=1e-6, abs=1e-9)
        assert tab[("attn", 1, -1)] == 0 and tab[("mlp", 1, -1)] == 0
        assert attr.logit == pytest.approx(dot(h["post"]), rel=1e-6)
        assert summed(attr) == pytest.approx(attr.logit, rel=1e-6)
    diff = logit_attribution(model, out, 1, 2, other=0)
    assert summed(diff) == pytest.approx(float(out.logits[0, 1, 2] - out.logits[0, 1, 0]), rel=1e-5)


VARIANTS = {
    "pre-layernorm-learned": dict(norm_type="layernorm", norm_position="pre", position_embedding="learned"),
    "pre-gemma-softcap": dict(norm_type="gemma_rmsnorm", norm_position="pre", final_logit_softcapping=5.0),
    "sandwich": dict(norm_type="rmsnorm", norm_position="sandwich"),
    "olmo2": dict(norm_type="rmsnorm", norm_position="post_sublayer"),
    "moe": dict(norm_type="rmsnorm", norm_position="pre", num_local_experts=4, num_experts_per_tok=2,
                mlp_gated=True, hidden_act="silu"),
}


@pytest.mark.parametrize("name", VARIANTS)
def test_attribution_sums_to_the_logit_on_every_placement(name):
    """Random tiny models (norm biases and gains made non-trivial): the shares add up to the logit the head computes
    from the final norm's output (≤ 1e-4 relative), and to the model's logit (before a soft cap)."""
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=4, intermediate_size=32,
                      tie_word_embeddings=False, initializer_range=0.3, **VARIANTS[name])
    model = CausalLM(cfg)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "norm" in n:
                p.add_(0.3 * torch.randn_like(p))
    ids = torch.randint(0, 50, (1, 7))
    out = run_trace(model, ids)
    for position in (0, 6):
        for token in (int(out.logits[0, position].argmax()), 3):
            attr = logit_attribution(model, out, position, token)
            with torch.no_grad():
                raw = float(model.lm_head(out.activations["ln_final.hook_normalized"][0, position])[token])
            assert summed(attr) == pytest.approx(raw, rel=1e-4, abs=1e-5)
            if cfg.final_logit_softcapping is None:
                assert summed(attr) == pytest.approx(float(out.logits[0, position, token]), rel=1e-4, abs=1e-5)
    steps = follow_steps(model, out, 6)
    assert steps.iloc[-1]["top_ids"][0] == int(out.logits[0, 6].argmax())
    if cfg.norm_type == "layernorm":
        assert "norm_bias" in set(attr.table["component"]) and "pos_embed" in set(attr.table["component"])
    if cfg.num_local_experts:  # the experts each FFN row names are the router's own choice
        mlp = steps[steps["kind"] == "mlp"]
        for _, row in mlp.iterrows():
            assert row["experts"] == out.activations[f"blocks.{row['layer']}.mlp.hook_expert_indices"][0, 6].tolist()
    if cfg.norm_position in ("sandwich", "post_sublayer"):  # the extra norms are named on their rows
        assert steps["module"].str.contains("post_feedforward_layernorm").any()
        with pytest.raises(ValueError):
            logit_attribution(model, out, 6, 3, by_head=True)


def test_post_norm_has_no_attribution():
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16,
                      norm_position="post")
    model = CausalLM(cfg)
    out = run_trace(model, torch.tensor([[1, 2, 3]]))
    assert not attribution_defined("post")
    with pytest.raises(ValueError):
        logit_attribution(model, out, 2, 0)
    steps = follow_steps(model, out, 2)
    assert list(steps["kind"][1:5]) == ["attn", "resid_mid", "mlp", "resid_post"]


def test_heads_add_up_to_attention():
    torch.manual_seed(1)
    cfg = ModelConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      intermediate_size=32, norm_type="rmsnorm", position_embedding="rope", initializer_range=0.3)
    model = CausalLM(cfg)
    out = run_trace(model, torch.tensor([[5, 1, 7, 2]]))
    tab = logit_attribution(model, out, 3, 9, by_head=True).table
    for layer in range(2):
        part = tab[tab["layer"] == layer]
        heads = part[part["component"].isin(("head", "attn_bias"))]["contribution"].sum()
        assert heads == pytest.approx(float(part[part["component"] == "attn"]["contribution"].iloc[0]), rel=1e-5,
                                      abs=1e-9)


# ---- SmolLM2 against transformers ------------------------------------------------------------------------------------
TEXT = "The Eiffel Tower is in the city of"


@pytest.fixture(scope="module")
def smollm2_both():
    pytest.importorskip("transformers")
    from transformers import AutoModelForCausalLM

    from engine.checkpoints import find_gguf_file
    from engine.tokenizer import TextTokenizer

    ours = CausalLM.from_pretrained("smollm2-135m")
    ids = torch.tensor([TextTokenizer.from_pretrained("smollm2-135m").encode(TEXT)])
    path = find_gguf_file()
    hf = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, attn_implementation="eager",
                                              dtype=torch.float32).eval()
    return ours, hf, ids


def hf_sub_steps(hf, ids) -> tuple[list[torch.Tensor], torch.Tensor]:
    """transformers' forward with hooks: per layer input_layernorm's output, self_attn's output, the residual
    after it (post_attention_layernorm's input), that norm's output, the MLP's output, the layer's output; then the
    final norm's output; in the order of :data:`BLOCK_STEPS` ``["pre"]``. Returns ``(vectors [1, T, H]..., logits)``."""
    got: list[torch.Tensor] = []
    handles = []
    first = lambda o: o[0] if isinstance(o, tuple) else o  # noqa: E731
    for layer in hf.model.layers:
        handles += [
            layer.input_layernorm.register_forward_hook(lambda m, i, o: got.append(first(o))),
            layer.self_attn.register_forward_hook(lambda m, i, o: got.append(first(o))),
            layer.post_attention_layernorm.register_forward_pre_hook(lambda m, i: got.append(i[0])),
            layer.post_attention_layernorm.register_forward_hook(lambda m, i, o: got.append(first(o))),
            layer.mlp.register_forward_hook(lambda m, i, o: got.append(first(o))),
            layer.register_forward_hook(lambda m, i, o: got.append(first(o))),
        ]
    handles.append(hf.model.norm.register_forward_hook(lambda m, i, o: got.append(first(o))))
    handles.append(hf.model.embed_tokens.register_forward_hook(lambda m, i, o: got.insert(0, first(o))))
    try:
        with torch.no_grad():
            logits = hf(ids).logits
    finally:
        for hd in handles:
            hd.remove()
    return got, logits


@pytest.mark.smollm2
@pytest.mark.parity
def test_smollm2_sub_steps_and_lens_match_transformers(smollm2_both):
    ours, hf, ids = smollm2_both
    position = ids.shape[1] - 1
    out = run_trace(ours, ids)
    steps = follow_steps(ours, out, position)
    ref, ref_logits = hf_sub_steps(hf, ids)
    assert len(ref) == len(steps) - 1  # every row but the head's
    for i, row in steps.iloc[:-1].iterrows():
        key = row["hook"].split(" + ")[0]
        mine = out.activations[key][0, position].double()
        theirs = ref[i][0, position].double()
        rel = float((mine - theirs).abs().max() / theirs.abs().max())
        assert rel <= 1e-5, (row["hook"], rel)
        assert row["norm"] == pytest.approx(float(theirs.norm()), rel=1e-5)
    # the lens through transformers' own final norm and head, on every residual row
    with torch.no_grad():
        for i, row in steps[steps["kind"].isin(("embed", "resid_mid", "resid_post"))].iterrows():
            lens = hf.lm_head(hf.model.norm(ref[i][0, position]))  # (V,)
            assert row["top_ids"] == lens.topk(len(row["top_ids"])).indices.tolist(), row["hook"]
    assert steps.iloc[-1]["top_ids"][0] == int(ref_logits[0, position].argmax())
    # the attribution adds up to the logit transformers computes
    token = int(ref_logits[0, position].argmax())
    attr = logit_attribution(ours, out, position, token, by_head=True)
    assert summed(attr) == pytest.approx(float(ref_logits[0, position, token]), rel=1e-4)
