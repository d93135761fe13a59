"""The forward pass's instrumentation: the activation recorder, the attention registry, RoPE tables once per forward,
and no state left on the (shared) modules."""

from __future__ import annotations

import pytest
import torch

import engine.model
from engine import CausalLM, ModelConfig
from engine.layers import ATTENTION_FUNCTIONS, rope_tables
from engine.recorder import NO_RECORDING, ActivationRecorder

V, H, L, N_HEADS, T = 99, 32, 3, 4, 6


def tiny(**kw) -> CausalLM:
    torch.manual_seed(0)
    fields = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS, intermediate_size=48,
                  max_position_embeddings=16, position_embedding="rope", num_key_value_heads=2)
    fields.update(kw)
    return CausalLM(ModelConfig(**fields))


def ids(B: int = 2) -> torch.Tensor:
    return torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(1))


def test_recorder_scopes_names_and_returns_the_tensor():
    store: dict[str, torch.Tensor] = {}
    rec = ActivationRecorder(store)
    t = torch.ones(2)
    assert rec.scope("blocks.3").scope("attn")("hook_pattern", t) is t
    assert rec("hook_embed", t) is t
    assert list(store) == ["blocks.3.attn.hook_pattern", "hook_embed"]
    only = ActivationRecorder(store2 := {}, only=("attn.hook_pattern",))
    only.scope("blocks.0")("hook_resid_pre", t)
    only.scope("blocks.0").scope("attn")("hook_pattern", t)
    assert list(store2) == ["blocks.0.attn.hook_pattern"]
    assert NO_RECORDING("x", t) is t and NO_RECORDING.scope("blocks.0") is NO_RECORDING and NO_RECORDING.store is None


def test_attentions_alone_record_only_the_patterns_and_equal_the_full_record():
    model = tiny()
    with torch.no_grad():
        both = model(ids(), output_activations=True)
        attn_only = model(ids(), output_attentions=True)
    assert attn_only.activations is None and len(attn_only.attentions) == L
    for i, pattern in enumerate(attn_only.attentions):
        assert torch.equal(pattern, both.activations[f"blocks.{i}.attn.hook_pattern"])


def test_rope_tables_are_built_once_per_forward(monkeypatch):
    calls = []

    def counting(config, position_ids, theta):
        calls.append(position_ids.shape)
        return rope_tables(config, position_ids, theta)

    monkeypatch.setattr(engine.model, "rope_tables", counting)
    model = tiny()
    with torch.no_grad():
        model(ids())
        model(ids(), output_activations=True)
    assert calls == [torch.Size([T])] * 2  # one table per forward, not one per layer (L = 3)


def test_attention_registry_and_its_errors():
    model = tiny()
    x = ids()
    with torch.no_grad():
        sdpa = model(x, attn_implementation="sdpa").logits
        eager = model(x, attn_implementation="eager").logits
        default = model(x).logits
    assert set(ATTENTION_FUNCTIONS) == {"eager", "sdpa"}
    assert torch.equal(default, sdpa)
    torch.testing.assert_close(eager, sdpa, rtol=0, atol=1e-5 * max(1.0, eager.abs().max().item()))
    with pytest.raises(ValueError, match="eager, sdpa.*'flash'"):
        model(x, attn_implementation="flash")
    with pytest.raises(ValueError, match="need attn_implementation='eager'"):
        model(x, output_attentions=True, attn_implementation="sdpa")


def test_forward_leaves_no_state_on_modules():
    """A model cached for every browser session must not keep one session's record (or anything else)."""
    model = tiny()

    def state():
        return {name: dict(vars(m)) for name, m in model.named_modules()}

    before = state()
    with torch.no_grad():
        model(ids(), output_activations=True, output_attentions=True, use_cache=True)
    after = state()
    assert before.keys() == after.keys()
    for name in before:
        assert before[name].keys() == after[name].keys(), name
        for key, value in before[name].items():
            assert after[name][key] is value or after[name][key] == value, (name, key)
