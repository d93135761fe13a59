"""Interventions (engine/interventions.py) against independent references.

* transformers' tiny random GPT-2 and Llama (GQA) models, loaded by our engine from ``save_pretrained``: the same
  ablation and patch done in transformers by forward hooks (a pre-hook on ``o_proj`` / ``c_proj`` zeroing or
  replacing one head's slice; a pre-hook on a decoder layer replacing ``hidden_states`` at a position; forward hooks
  replacing the attention's and the MLP's output), logits within 1e-4 relative;
* exact identities: patching every position of ``hook_resid_pre`` with a run's own values gives that run, with the
  other run's values gives the other run; zero-ablating a head = zeroing that head's ``o_proj`` columns (property);
* the batched sweep = one forward per run; two threads intervening on one shared model do not see each other.
"""

from __future__ import annotations

import copy
import threading

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import CausalLM, KVCache, ModelConfig
from engine.interventions import ActivationPatch, HeadAblation, base_run, mean_head_ablation, sweep, sweep_cost
from tests.model_helpers import perturb

transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

V, H, L, N_HEADS, T = 99, 32, 3, 4, 9
HD = H // N_HEADS
RTOL = 1e-4


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max() / b.double().abs().max())


def _hf_gpt2():
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=V, n_embd=H, n_layer=L, n_head=N_HEADS, n_positions=32, attn_implementation="eager"))


def _hf_llama():
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS, num_key_value_heads=2,
        intermediate_size=64, max_position_embeddings=32, tie_word_embeddings=False, attn_implementation="eager"))


#: family -> (builder, hf module paths: decoder layers, a layer's attention, its o_proj, its mlp)
FAMILIES = {
    "gpt2": (_hf_gpt2, lambda m: m.transformer.h, "attn", "attn.c_proj", "mlp"),
    "llama": (_hf_llama, lambda m: m.model.layers, "self_attn", "self_attn.o_proj", "mlp"),
}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """{family: (hf model, our model of its save_pretrained folder)}."""
    out = {}
    for i, (family, (build, *_)) in enumerate(FAMILIES.items()):
        torch.manual_seed(i)
        hf = build().eval()
        perturb(hf, seed=10 + i)
        folder = tmp_path_factory.mktemp(family)
        hf.save_pretrained(folder)
        out[family] = (hf, CausalLM.from_pretrained(folder))
    return out


def _ids(seed: int) -> torch.Tensor:
    return torch.randint(0, V, (1, T), generator=torch.Generator().manual_seed(seed))


CLEAN, CORRUPT = _ids(1), _ids(2)


def _hooked(hf, family, hooks, ids) -> torch.Tensor:
    """transformers' logits of ``ids`` with ``hooks`` = [(module path in a layer, layer, kind, fn)] registered."""
    _, layers, *_ = FAMILIES[family]
    handles = []
    try:
        for path, layer, kind, fn in hooks:
            module = layers(hf)[layer].get_submodule(path) if path else layers(hf)[layer]
            if kind == "pre":
                handles.append(module.register_forward_pre_hook(fn, with_kwargs=True))
            else:
                handles.append(module.register_forward_hook(fn))
        with torch.no_grad():
            return hf(ids).logits
    finally:
        for h in handles:
            h.remove()


def _o_proj_pre(head: int, values):
    """Pre-hook on o_proj: head's slice of the input (the concatenated head outputs) -> values (callable of it)."""
    def hook(module, args, kwargs):
        x = args[0].clone()  # (B, T, nh*hd)
        x[..., head * HD:(head + 1) * HD] = values(x[..., head * HD:(head + 1) * HD])
        return (x, *args[1:]), kwargs
    return hook


def _layer_pre(position: int, value: torch.Tensor):
    """Pre-hook on a decoder layer: hidden_states[:, position] -> value[:, position]."""
    def hook(module, args, kwargs):
        if args:
            x = args[0].clone()
            x[:, position] = value[:, position]
            return (x, *args[1:]), kwargs
        x = kwargs["hidden_states"].clone()
        x[:, position] = value[:, position]
        return args, {**kwargs, "hidden_states": x}
    return hook


def _output_patch(position: int, value: torch.Tensor):
    """Forward hook: the module's output (first element of a tuple) at position -> value[:, position]."""
    def hook(module, args, output):
        first = output[0] if isinstance(output, tuple) else output
        first = first.clone()
        first[:, position] = value[:, position]
        return (first, *output[1:]) if isinstance(output, tuple) else first
    return hook


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("layer, head", [(0, 0), (1, 3), (2, 1)])
def test_zero_ablation_matches_transformers_hook(pair, family, layer, head):
    hf, ours = pair[family]
    _, _, _, o_proj, _ = FAMILIES[family]
    ref = _hooked(hf, family, [(o_proj, layer, "pre", _o_proj_pre(head, torch.zeros_like))], CLEAN)
    with torch.no_grad():
        got = ours(CLEAN, interventions=[HeadAblation(layer, head)]).logits
        plain = ours(CLEAN).logits
    assert rel_err(got, ref) <= RTOL
    assert rel_err(plain, ref) > 100 * RTOL  # the ablation changed something


@pytest.mark.parametrize("family", FAMILIES)
def test_mean_ablation_matches_transformers_hook(pair, family):
    hf, ours = pair[family]
    _, _, _, o_proj, _ = FAMILIES[family]
    reference = torch.cat([_ids(s) for s in range(5, 9)])  # (4, T): a reference batch
    with torch.no_grad():
        record = ours(reference, output_activations=True).activations
    ablation = mean_head_ablation(record, 1, 2)
    assert ablation.mean.shape == (T, HD)
    ref = _hooked(hf, family, [(o_proj, 1, "pre", _o_proj_pre(2, lambda x: ablation.mean.expand_as(x)))], CLEAN)
    with torch.no_grad():
        got = ours(CLEAN, interventions=[ablation]).logits
    assert rel_err(got, ref) <= RTOL


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("layer, position", [(0, 0), (1, 4), (2, 8)])
def test_resid_pre_patch_matches_transformers_hook(pair, family, layer, position):
    hf, ours = pair[family]
    with torch.no_grad():
        clean_hf = hf(CLEAN, output_hidden_states=True).hidden_states[layer]  # (1, T, H): layer's input
        clean = ours(CLEAN, output_activations=True).activations[f"blocks.{layer}.hook_resid_pre"]
        got = ours(CORRUPT, interventions=[ActivationPatch(f"blocks.{layer}.hook_resid_pre", position, clean)]).logits
    ref = _hooked(hf, family, [("", layer, "pre", _layer_pre(position, clean_hf))], CORRUPT)
    assert rel_err(got, ref) <= RTOL


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("which", ["hook_attn_out", "hook_mlp_out"])
def test_sublayer_output_patch_matches_transformers_hook(pair, family, which):
    hf, ours = pair[family]
    _, _, attn, _, mlp = FAMILIES[family]
    path = attn if which == "hook_attn_out" else mlp
    captured = {}

    def capture(module, args, output):
        captured["out"] = (output[0] if isinstance(output, tuple) else output).clone()

    _hooked(hf, family, [(path, 1, "post", capture)], CLEAN)
    ref = _hooked(hf, family, [(path, 1, "post", _output_patch(5, captured["out"]))], CORRUPT)
    with torch.no_grad():
        clean = ours(CLEAN, output_activations=True).activations[f"blocks.1.{which}"]
        got = ours(CORRUPT, interventions=[ActivationPatch(f"blocks.1.{which}", [5], clean)]).logits
    assert rel_err(got, ref) <= RTOL


@pytest.mark.parametrize("family", FAMILIES)
def test_head_z_patch_matches_transformers_hook(pair, family):
    hf, ours = pair[family]
    _, _, _, o_proj, _ = FAMILIES[family]
    captured = {}

    def capture(module, args, kwargs):
        captured["z"] = args[0].clone()  # (1, T, nh*hd)

    _hooked(hf, family, [(o_proj, 2, "pre", capture)], CLEAN)
    clean_slice = captured["z"][..., 3 * HD:4 * HD]  # (1, T, hd)

    def patch(x):
        x = x.clone()
        x[:, [2, 6]] = clean_slice[:, [2, 6]]
        return x

    ref = _hooked(hf, family, [(o_proj, 2, "pre", _o_proj_pre(3, patch))], CORRUPT)
    with torch.no_grad():
        z = ours(CLEAN, output_activations=True).activations["blocks.2.attn.hook_z"]  # (1, T, nh, hd)
        got = ours(CORRUPT, interventions=[ActivationPatch("blocks.2.attn.hook_z", [2, 6], z, head=3)]).logits
    assert rel_err(got, ref) <= RTOL


# ------------------------------------------------------------------------------------------------ exact identities


def _config(**extra) -> ModelConfig:
    return ModelConfig(**(dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS,
                               num_key_value_heads=2, intermediate_size=64, max_position_embeddings=32) | extra))


@pytest.fixture(scope="module")
def model() -> CausalLM:
    torch.manual_seed(0)
    return CausalLM(_config())


@pytest.mark.parametrize("layer", range(L))
@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_resid_pre_patch_everywhere_reproduces_either_run(model, layer, attention):
    name = f"blocks.{layer}.hook_resid_pre"
    with torch.no_grad():
        clean, corrupt = (model(ids, output_activations=True).activations[name] for ids in (CLEAN, CORRUPT))
        want_clean, want_corrupt = (model(ids, attn_implementation=attention).logits for ids in (CLEAN, CORRUPT))
        own = model(CORRUPT, interventions=[ActivationPatch(name, None, corrupt)], attn_implementation=attention)
        other = model(CORRUPT, interventions=[ActivationPatch(name, range(T), clean)], attn_implementation=attention)
    if attention == "eager":  # the record's own path: bit for bit
        assert torch.equal(own.logits, want_corrupt) and torch.equal(other.logits, want_clean)
    else:  # values recorded by eager attention fed into SDPA layers: equal up to float rounding
        torch.testing.assert_close(own.logits, want_corrupt, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(other.logits, want_clean, rtol=1e-6, atol=1e-6)


@settings(max_examples=12, deadline=None)
@given(layer=st.integers(0, L - 1), head=st.integers(0, N_HEADS - 1), kv=st.sampled_from([1, 2, 4]),
       norm_position=st.sampled_from(["pre", "post"]), seed=st.integers(0, 2 ** 16))
def test_zero_ablation_equals_zeroed_o_proj_columns(layer, head, kv, norm_position, seed):
    torch.manual_seed(seed)
    model = CausalLM(_config(num_key_value_heads=kv, norm_position=norm_position, bias=True))
    edited = copy.deepcopy(model)
    with torch.no_grad():
        edited.layers[layer].self_attn.o_proj.weight[:, head * HD:(head + 1) * HD] = 0
        ids = torch.randint(0, V, (2, T), generator=torch.Generator().manual_seed(seed))
        got = model(ids, interventions=[HeadAblation(layer, head)]).logits
        ref = edited(ids).logits
    torch.testing.assert_close(got, ref, rtol=1e-6, atol=1e-6)


def test_gqa_ablation_leaves_heads_sharing_the_kv_head(model):
    """Heads 0 and 1 share KV head 0 (4 query heads, 2 KV heads): ablating 0 leaves 1's output unchanged."""
    with torch.no_grad():
        plain = model(CLEAN, output_activations=True).activations["blocks.1.attn.hook_z"]
        cut = model(CLEAN, output_activations=True, interventions=[HeadAblation(1, 0)]).activations
    z = cut["blocks.1.attn.hook_z"]  # (1, T, nh, hd): the record holds the edited values
    assert torch.equal(z[:, :, 0], torch.zeros_like(z[:, :, 0]))
    assert torch.equal(z[:, :, 1:], plain[:, :, 1:])
    assert torch.equal(cut["blocks.1.attn.hook_k"], model(CLEAN, output_activations=True).activations["blocks.1.attn.hook_k"])


def test_interventions_with_a_kv_cache_equal_the_full_forward(model):
    with torch.no_grad():
        clean = model(CLEAN, output_activations=True).activations
        run = [HeadAblation(0, 2), ActivationPatch("blocks.1.hook_resid_pre", [1, 6], clean["blocks.1.hook_resid_pre"])]
        full = model(CORRUPT, interventions=run).logits
        cache = KVCache()
        first = model(CORRUPT[:, :4], past_key_values=cache, interventions=run).logits
        rest = model(CORRUPT[:, 4:], past_key_values=cache, interventions=run).logits
    torch.testing.assert_close(torch.cat([first, rest], 1), full, rtol=1e-5, atol=1e-5)


def test_invalid_interventions_are_refused(model):
    value = torch.zeros(1, T, H)
    with pytest.raises(ValueError, match="cannot patch"):
        ActivationPatch("blocks.0.mlp.hook_post", 0, value)
    with pytest.raises(ValueError, match="head="):
        ActivationPatch("blocks.0.hook_resid_pre", 0, value, head=1)
    with pytest.raises(ValueError, match="kind"):
        HeadAblation(0, 0, kind="random")
    with pytest.raises(ValueError, match="mean"):
        HeadAblation(0, 0, kind="mean")
    with pytest.raises(ValueError, match="empty"):
        ActivationPatch("blocks.0.hook_resid_pre", [], value)
    with pytest.raises(ValueError, match="layer 3 does not exist"):
        model(CLEAN, interventions=[HeadAblation(3, 0)])
    with pytest.raises(ValueError, match="head 4 does not exist"):
        model(CLEAN, interventions=[HeadAblation(0, 4)])
    with pytest.raises(ValueError, match="beyond the sequence"):
        model(CLEAN, interventions=[ActivationPatch("blocks.0.hook_resid_pre", T, torch.zeros(1, T + 1, H))])
    with pytest.raises(ValueError, match="activation there"):
        model(CLEAN, interventions=[ActivationPatch("blocks.0.hook_resid_pre", 1, torch.zeros(1, T, H + 1))])
    with pytest.raises(TypeError):
        model(CLEAN, interventions=["blocks.0.hook_resid_pre"])
    assert HeadAblation(1, 2) == HeadAblation(1, 2) and len({HeadAblation(1, 2), HeadAblation(1, 2)}) == 1


def test_two_sessions_intervening_at_once_do_not_see_each_other(model):
    """Two threads on one model object, each with its own intervention, many times at once: every result equals
    the same call made alone (nothing of one call's interventions is left on the shared modules)."""
    runs = {"a": [HeadAblation(1, 0)], "b": [HeadAblation(2, 3), HeadAblation(0, 1)]}
    with torch.no_grad():
        alone = {k: model(CLEAN, interventions=v).logits for k, v in runs.items()}
        plain = model(CLEAN).logits
    barrier = threading.Barrier(3)
    bad = []

    def session(key):
        barrier.wait()
        for _ in range(25):
            with torch.no_grad():
                got = model(CLEAN, interventions=runs[key]).logits if key in runs else model(CLEAN).logits
            if not torch.equal(got, alone.get(key, plain)):
                bad.append(key)

    threads = [threading.Thread(target=session, args=(k,)) for k in ("a", "b", "plain")]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not bad


# ------------------------------------------------------------------------------------------------ batched sweeps


SWEEP_CONFIGS = {
    "gqa": dict(),
    "post_norm_learned": dict(norm_position="post", position_embedding="learned", num_key_value_heads=4),
    "sliding": dict(sliding_window=3, layer_types=("sliding_attention", "full_attention", "sliding_attention")),
}


@pytest.mark.parametrize("variant", SWEEP_CONFIGS)
def test_sweep_equals_one_forward_per_run(variant):
    torch.manual_seed(3)
    model = CausalLM(_config(**SWEEP_CONFIGS[variant]))
    with torch.no_grad():
        clean = model(CLEAN, output_activations=True).activations
    runs = [[HeadAblation(l, h)] for l in range(L) for h in range(N_HEADS)]
    runs += [[ActivationPatch(f"blocks.{l}.hook_resid_pre", [p], clean[f"blocks.{l}.hook_resid_pre"])]
             for l in range(L) for p in range(T)]
    runs += [[ActivationPatch("blocks.1.attn.hook_z", [4, 7], clean["blocks.1.attn.hook_z"], head=2),
              HeadAblation(2, 0)], [], [ActivationPatch("blocks.2.hook_mlp_out", 8, clean["blocks.2.hook_mlp_out"])]]
    positions = [0, 5, 8]

    def metric(logits):  # (rows, 3, V) -> (rows, 3)
        return torch.log_softmax(logits, -1)[..., 7]

    seen = []
    got = sweep(model, CORRUPT, runs, metric, logit_positions=positions, max_tokens=40,
                progress=lambda done, total: seen.append((done, total)))
    with torch.no_grad():
        ref = torch.stack([metric(model(CORRUPT, interventions=run).logits[:, positions])[0] for run in runs])
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)
    total = sweep_cost(model, T, runs)
    assert seen[-1] == pytest.approx((total, total)) and all(a <= b for (a, _), (b, _) in zip(seen, seen[1:]))
    # 12 ablations from their own layer on: 4 (3 + 2 + 1) / 3 layers = 8 forwards; patches from their position on
    assert total == pytest.approx(8 + sum((L - l) * (T - p) for l in range(L) for p in range(T)) / (L * T)
                                  + (L - 1) / L + 1 * 1 / (L * T))  # the ablation in the mixed run: every position


def test_sweep_refuses_a_batch_of_prompts(model):
    with pytest.raises(ValueError, match=r"\[1, T\]"):
        base_run(model, torch.cat([CLEAN, CORRUPT]))
