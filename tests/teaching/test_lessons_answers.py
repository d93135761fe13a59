"""Every answer function of lessons 1-3 against an independent reference (a formula, a hand count, forward hooks on
the model's own modules, a direct softmax or cross-entropy), and a changed setting changes the key.

The references never go through the activation recorder or the analysis function the answer calls: module outputs
come from ``register_forward_hook`` on the Llama-named submodules, losses from ``torch.nn.functional``.
"""

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

from teaching.answers.core import REGISTRY, StepInputs
import teaching.lessons  # noqa: F401  (registers every answer function, lessons 1 to 3's in answers.block/attention)
from engine import PRESETS, CausalLM
from engine.generation import forward_flops

MINI = {"preset": "minimind_demo"}
GPT2 = {"preset": "gpt2_walkthrough"}
NUMPY = {"preset": "numpy_decoder", "input.text": "床前明月光，疑是地上霜。"}  # a shorter input: a faster test


def key(built, name, settings, **args):
    return REGISTRY[name](built(settings), **args)


def module_outputs(s: StepInputs, layer: int = 0) -> dict:
    """Block ``layer``'s sub-module outputs and its input, from forward hooks (not the activation recorder)."""
    got = {}
    block = s.model.layers[layer]
    hooks = [block.register_forward_pre_hook(lambda m, a: got.__setitem__("x", a[0].detach()))]
    for name in ("input_layernorm", "self_attn", "post_attention_layernorm", "mlp"):
        hooks.append(getattr(block, name).register_forward_hook(
            lambda m, a, out, name=name: got.__setitem__(name, (out[0] if isinstance(out, tuple) else out).detach())))
    with torch.no_grad():
        s.model(s.input_ids)
    for h in hooks:
        h.remove()
    return got


def test_tying_savings_is_the_untied_models_extra_parameters(built):
    c = PRESETS["minimind_demo"]
    tied = sum(p.numel() for p in CausalLM(c).parameters())  # parameters() yields a shared tensor once
    untied = sum(p.numel() for p in CausalLM(dataclasses.replace(c, tie_word_embeddings=False)).parameters())
    ans = key(built, "tying_savings", MINI)
    assert ans.correct == untied - tied == 30 * 16
    assert ans.correct not in ans.distractors


@pytest.mark.parametrize("of, expect", [("resid", (6, 16)), ("ffn_hidden", (6, 32)), ("logits", (6, 30))])
def test_tensor_shape_is_the_tutorials(built, of, expect):
    """The MiniMind demo: T = 6 random ids, hidden 16, FFN 32, vocabulary 30 (the tutorial's printed shapes)."""
    ans = key(built, "tensor_shape", MINI, of=of)
    assert ans.correct == f"[{expect[0]}, {expect[1]}]" and ans.correct not in ans.distractors


def test_tensor_shape_of_the_cat_eats_fish_walkthrough(built):
    assert key(built, "tensor_shape", GPT2).correct == "[3, 4]"  # the tutorial's table: [3, 4] throughout
    assert key(built, "tensor_shape", GPT2, of="ffn_hidden").correct == "[3, 16]"


def test_largest_walk_step_against_hooked_module_outputs(built):
    s = built(MINI)
    o = module_outputs(s)
    x1 = o["x"] + o["self_attn"]
    norms = {"x = E[ids] (+ P)": o["x"], "n1 = Norm(x)": o["input_layernorm"], "a = Attn(n1)": o["self_attn"],
             "x1 = x + a": x1, "n2 = Norm(x1)": o["post_attention_layernorm"], "f = FFN(n2)": o["mlp"],
             "x2 = x1 + f": x1 + o["mlp"]}
    mean = {k: float(v[0].norm(dim=-1).mean()) for k, v in norms.items()}
    ans = key(built, "largest_walk_step", MINI)
    top = max(mean.values())
    tied = [k for k in norms if mean[k] >= 0.99 * top]  # both norm outputs sit at ~sqrt(H) at init: one option
    assert tied == ["n1 = Norm(x)", "n2 = Norm(x1)"]
    assert ans.correct == {"en": "n1 = Norm(x) and n2 = Norm(x1) (tied)", "zh": "n1 = Norm(x) 和 n2 = Norm(x1)（并列）"}
    assert ans.values["top_norm"] == pytest.approx(top, rel=1e-5)
    assert ans.highlight == {"x": [2, 5]}  # the walk-through's steps 2 (n1) and 5 (n2): the reveal outlines both
    assert ans.distractors and all(mean[d] < top * 0.99 for d in ans.distractors)
    assert ans.scores == pytest.approx([min(mean[k] for k in tied), *(mean[d] for d in ans.distractors)], rel=1e-5)


def test_larger_norm_x_against_layernorm_of_x(built):
    s = built(GPT2)
    o = module_outputs(s)
    nx, nln = (float(v[0].norm(dim=-1).mean()) for v in (o["x"], o["input_layernorm"]))
    ans = key(built, "larger_norm", GPT2, a=1, b=2)
    assert ans.correct == ("n1 = Norm(x)" if nln > nx else "x = E[ids] (+ P)")
    assert nln == pytest.approx(2.0, rel=2e-2)  # LayerNorm at init: sqrt(H) = 2 (eps lowers it for a tiny x)


def _residual_means(s: StepInputs) -> list[float]:
    """Mean norm of the embedding, each block's output and the final norm's, from hooks."""
    states = []
    hooks = [s.model.layers[0].register_forward_pre_hook(lambda m, a: states.append(a[0].detach()))]
    hooks += [b.register_forward_hook(lambda m, a, out: states.append(out.detach())) for b in s.model.layers]
    hooks.append(s.model.norm.register_forward_hook(lambda m, a, out: states.append(out.detach())))
    with torch.no_grad():
        s.model(s.input_ids)
    for h in hooks:
        h.remove()
    return [float(h[0].norm(dim=-1).mean()) for h in states]


def test_largest_residual_depth_against_hooks(built):
    means = _residual_means(built(MINI))
    top = max(range(len(means)), key=means.__getitem__)
    ans = key(built, "largest_residual_depth", MINI)
    assert ans.highlight == {"x": top} and ans.values["norm"] == pytest.approx(means[top], rel=1e-5)


def test_residual_norm_of_post_ln_is_sqrt_h(built):
    ans = key(built, "residual_norm_at", NUMPY)
    assert ans.correct == pytest.approx(_residual_means(built(NUMPY))[6], rel=1e-5)
    assert ans.correct == pytest.approx(math.sqrt(256), rel=1e-3)  # LayerNorm's output at init: sqrt(H)


def test_placement_larger_norm_against_two_models_built_by_hand(built):
    s = built({**MINI, "prepost.depth": 6})
    c = s.config.replace(num_hidden_layers=6)
    torch.manual_seed(0)
    pre = CausalLM(c).eval()
    post = CausalLM(c.replace(norm_position="post")).eval()
    post.load_state_dict(pre.state_dict())
    with torch.no_grad():
        norms = {name: float(m(s.input_ids, output_hidden_states=True).hidden_states[-2][0].norm(dim=-1).mean())
                 for name, m in (("Pre-Norm", pre), ("Post-Norm", post))}
    ans = key(built, "placement_larger_norm", {**MINI, "prepost.depth": 6})
    assert ans.correct == max(norms, key=norms.get)


def test_total_parameters_is_a_hand_count(built):
    c = PRESETS["gpt2_walkthrough"].replace(num_hidden_layers=12)
    H, I, V, P = c.hidden_size, c.intermediate_size, c.vocab_size, c.max_position_embeddings
    block = 4 * (H * H + H) + (H * I + I) + (I * H + H) + 2 * 2 * H  # q k v o, up, down (biases), two LayerNorms
    total = V * H + P * H + 12 * block + 2 * H  # tied head: no extra matrix; final LayerNorm
    ans = key(built, "total_parameters", {**GPT2, "cfg.num_hidden_layers": 12})
    assert ans.correct == total and ans.values["per_block"] == block


def test_kept_logits_shape(built):
    ans = key(built, "kept_logits_shape", {**MINI, "loss.keep": 3})
    assert ans.correct == "[1, 3, 30]" and ans.values["full"] == "[1, 6, 30]"


def test_supervised_targets_and_mean_loss_against_cross_entropy(built):
    settings = {**MINI, "loss.prompt_len": 2}
    s = built(settings)
    labels = s.input_ids.clone()
    labels[:, :2] = -100  # the tutorial's example 6: the first 2 tokens are the prompt
    with torch.no_grad():
        logits = s.model(s.input_ids).logits
    target = labels[0, 1:]
    ce = F.cross_entropy(logits[0, :-1], target, ignore_index=-100)
    assert key(built, "supervised_targets", settings).correct == int((target != -100).sum()) == 4
    assert key(built, "mean_loss", settings).correct == pytest.approx(float(ce), rel=1e-5)


def test_mask_fraction_is_the_upper_triangle(built):
    s = built(NUMPY)
    T = s.input_ids.shape[1]
    ans = key(built, "mask_fraction", NUMPY)
    assert ans.correct == round(T * (T - 1) / 2 / T ** 2, 3)


def test_score_scale_is_sqrt_head_dim(built):
    assert key(built, "score_scale", NUMPY).correct == pytest.approx(math.sqrt(256 / 8), abs=1e-3)


def _pattern(s: StepInputs, layer: int = 0, head: int = 0) -> torch.Tensor:
    """One head's softmax(QK^T/sqrt(d) + mask) rebuilt from hooked q/k projections of block ``layer``."""
    got = {}
    attn = s.model.layers[layer].self_attn
    hooks = [attn.q_proj.register_forward_hook(lambda m, a, o: got.__setitem__("q", o.detach())),
             attn.k_proj.register_forward_hook(lambda m, a, o: got.__setitem__("k", o.detach()))]
    with torch.no_grad():
        s.model(s.input_ids)
    for h in hooks:
        h.remove()
    d = s.config.head_dim
    q, k = got["q"][0, :, head * d:(head + 1) * d], got["k"][0, :, head * d:(head + 1) * d]
    T = q.shape[0]
    scores = q @ k.T / math.sqrt(d) + torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
    return torch.softmax(scores, dim=-1)


def test_forward_cost_growth_holds_for_both_counts():
    c = PRESETS["numpy_decoder"]
    ans = REGISTRY["forward_cost_growth"](StepInputs({}, lambda: (c, None, None, None, None)), short=256, long=512)
    full = forward_flops(c, 512, 512, 512) / forward_flops(c, 256, 256, 256)
    attn = lambda T: c.num_hidden_layers * 4 * c.num_attention_heads * T * T * c.head_dim  # noqa: E731
    half = (forward_flops(c, 512, 512, 512) - attn(512) / 2) / (forward_flops(c, 256, 256, 256) - attn(256) / 2)
    assert 2 < half < full < 2.5 and ans.correct["en"].startswith("a little more than 2×")
    assert ans.values["ratio"] == round(full, 2) and ans.values["half"] == round(half, 2)
    assert ans.scores[0] == 0 and max(ans.scores[1:]) == pytest.approx(-(half - 2))  # exactly 2×: the nearest rival


def test_attention_answers_against_a_softmax_by_hand(built):
    s = built(NUMPY)  # learned positions: q and k come straight from the projections (no RoPE)
    p = _pattern(s)
    assert key(built, "first_row_weight", NUMPY).correct == 1.0 == round(float(p[0, 0]), 3)
    top = int(p[-1].argmax())
    assert key(built, "top_key_last_row", NUMPY).correct == f"{top}: {s.tokens[top]}"
    spread = key(built, "last_row_spread", NUMPY)
    factor = float(p[-1].max()) * p.shape[-1]
    assert factor < 1.1 and spread.correct["en"].startswith("almost evenly")
    assert spread.values["w"] == pytest.approx(float(p[-1].max()), rel=1e-5)
    assert spread.scores[0] == 0 and max(spread.scores[1:]) == pytest.approx(factor - 2, rel=1e-5)


def test_next_token_and_temperature_against_softmax(built):
    settings = {**NUMPY, "next.temperature": 0.5}
    s = built(settings)
    with torch.no_grad():
        logits = s.model(s.input_ids).logits[0, -1].double()
    top = int(logits.argmax())
    assert key(built, "top_next_token", settings).correct == f"“{s.tokenizer.token_strings([top])[0]}”"
    p1, p05 = (float(torch.softmax(logits / t, -1).max()) for t in (1.0, 0.5))
    assert p05 > p1  # a lower temperature sharpens (a property, with the model's own logits)
    assert key(built, "temperature_effect", settings).correct["en"] == "it rises"


def test_forward_cost_ratio_by_hand():
    c = PRESETS["numpy_decoder"]
    H, I, V, L, T = c.hidden_size, c.intermediate_size, c.vocab_size, c.num_hidden_layers, 256

    def flops(n):  # per layer: 4 H x H projections and 2 FFN matrices per token, QK^T and PV over n x n; the head
        return L * (n * (4 * 2 * H * H + 2 * 2 * H * I) + 2 * 2 * n * n * H) + 2 * H * V * n

    assert flops(T) == forward_flops(c, T, T, T)
    ans = REGISTRY["forward_cost_ratio"](StepInputs({}, lambda: (c, None, None, None, None)), short=256, long=512)
    assert ans.correct == round(flops(512) / flops(256), 2)


def test_zero_activations_relu_and_gelu(built):
    relu = {**GPT2, "cfg.ffn": "relu"}
    s = built(relu)
    got = {}
    h = s.model.layers[0].mlp.up_proj.register_forward_hook(lambda m, a, o: got.__setitem__("pre", o.detach()))
    with torch.no_grad():
        s.model(s.input_ids)
    h.remove()
    negative = 100.0 * float((got["pre"] <= 0).float().mean())
    assert key(built, "zero_activations", relu).correct == pytest.approx(negative)
    assert key(built, "zero_share_choice", GPT2).correct["en"] == "none (0 %)"  # GELU(x) = 0 only at x = 0


@pytest.mark.parametrize("name, a, b", [
    ("tying_savings", MINI, GPT2),
    ("tensor_shape", MINI, GPT2),
    ("total_parameters", GPT2, {**GPT2, "cfg.num_hidden_layers": 12}),
    ("supervised_targets", {**MINI, "loss.prompt_len": 2}, {**MINI, "loss.prompt_len": 4}),
    ("score_scale", NUMPY, {**NUMPY, "cfg.num_attention_heads": 4, "cfg.num_key_value_heads": 4}),
])
def test_a_changed_setting_changes_the_key(built, name, a, b):
    assert key(built, name, a).correct != key(built, name, b).correct


def test_a_changed_corpus_text_changes_the_key(built):
    other = {**NUMPY, "input.text": "举头望明月，低头思故乡。春眠不觉晓"}
    assert key(built, "mask_fraction", NUMPY).correct != key(built, "mask_fraction", other).correct
