"""engine.checkpoints: parity with transformers' GPT-2 / Llama / Qwen2, file-format edge cases, our own format,
unsupported configs and path containment. Offline and fast: tiny random models saved with save_pretrained."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from engine import CausalLM, ModelConfig
from engine.checkpoints import (
    CheckpointError,
    UnsafePathError,
    UnsupportedCheckpointError,
    config_from_hf,
    list_checkpoints,
    load_pretrained,
    resolve_checkpoint,
    save_model,
)
from tests.model_helpers import perturb

transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()
try:
    transformers.utils.logging.disable_progress_bar()
except Exception:  # pragma: no cover
    pass

V, H, L, N_HEADS, N_POS, T = 99, 32, 2, 4, 64, 11


def _hf_gpt2():
    cfg = transformers.GPT2Config(vocab_size=V, n_embd=H, n_layer=L, n_head=N_HEADS, n_positions=N_POS,
                                  attn_implementation="eager")
    return transformers.GPT2LMHeadModel(cfg)


def _hf_llama():
    cfg = transformers.LlamaConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS,
                                   num_key_value_heads=2, intermediate_size=64, max_position_embeddings=N_POS,
                                   rope_theta=5000.0, tie_word_embeddings=False, attn_implementation="eager")
    return transformers.LlamaForCausalLM(cfg)


def _hf_qwen2():
    cfg = transformers.Qwen2Config(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS,
                                   num_key_value_heads=2, intermediate_size=64, max_position_embeddings=N_POS,
                                   tie_word_embeddings=True, attn_implementation="eager")
    return transformers.Qwen2ForCausalLM(cfg)


BUILDERS = {"gpt2": _hf_gpt2, "llama": _hf_llama, "qwen2": _hf_qwen2}


@pytest.fixture(scope="module")
def hf_saved(tmp_path_factory):
    """{family: (hf model, folder)} built once per module (seeded random init, perturbed, save_pretrained)."""
    out = {}
    for i, (family, build) in enumerate(BUILDERS.items()):
        torch.manual_seed(i)
        model = build().eval()
        perturb(model, seed=100 + i)
        folder = tmp_path_factory.mktemp(family)
        model.save_pretrained(folder)
        out[family] = (model, folder)
    return out


def _ids(seed: int = 0) -> torch.Tensor:
    return torch.randint(0, V, (2, T), generator=torch.Generator().manual_seed(seed))


def _logits(model: CausalLM, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(ids).logits


def _copy_folder(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _read_tensors(path: Path) -> dict[str, torch.Tensor]:
    with safe_open(str(path), framework="pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


# ---------------------------------------------------------------------------------------------------
# Parity with transformers
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("family", list(BUILDERS))
def test_parity_with_transformers(hf_saved, family):
    hf, folder = hf_saved[family]
    ours = load_pretrained(folder)
    ids = _ids()
    with torch.no_grad():
        ref = hf(ids, output_attentions=True, output_hidden_states=True)
        out = ours(ids, output_attentions=True, output_hidden_states=True)
    assert (ref.logits - out.logits).abs().max().item() <= 1e-4
    assert len(ref.attentions) == len(out.attentions) == L
    for a, b in zip(ref.attentions, out.attentions):
        assert a.shape == b.shape == (2, N_HEADS, T, T)
        assert (a - b).abs().max().item() <= 1e-5
    # Same convention as HF: the embedding output, blocks 1..L-1, and last the final norm's output.
    assert len(ref.hidden_states) == len(out.hidden_states) == L + 1
    for i in range(L + 1):
        assert (ref.hidden_states[i] - out.hidden_states[i]).abs().max().item() <= 1e-4, i
    tied = hf.config.tie_word_embeddings
    assert ours.config.tie_word_embeddings == tied
    assert (ours.lm_head.weight is ours.embed_tokens.weight) == tied
    assert ours.num_parameters() == hf.num_parameters()
    assert not ours.training


def test_config_mapping(hf_saved):
    gpt2 = config_from_hf(json.loads((hf_saved["gpt2"][1] / "config.json").read_text()))
    assert (gpt2.hidden_size, gpt2.intermediate_size, gpt2.max_position_embeddings) == (H, 4 * H, N_POS)
    assert (gpt2.hidden_act, gpt2.norm_type, gpt2.position_embedding, gpt2.bias) == ("gelu_new", "layernorm", "learned", True)
    assert gpt2.tie_word_embeddings

    raw = json.loads((hf_saved["llama"][1] / "config.json").read_text())
    llama = config_from_hf(raw)
    assert llama.rope_theta == 5000.0  # transformers 5 writes it inside rope_parameters
    assert (llama.kv_heads, llama.mlp_gated, llama.norm_type, llama.bias, llama.qkv_bias) == (2, True, "rmsnorm", False, False)
    assert not llama.tie_word_embeddings
    old_style = {k: v for k, v in raw.items() if k != "rope_parameters"} | {"rope_theta": 123.0, "rope_scaling": None}
    assert config_from_hf(old_style).rope_theta == 123.0

    qwen = config_from_hf(json.loads((hf_saved["qwen2"][1] / "config.json").read_text()))
    assert (qwen.bias, qwen.qkv_bias, qwen.tie_word_embeddings) == (False, True, True)

    # Llama-layout checkpoints found by model_type alone (no "architectures") and n_inner given explicitly.
    assert config_from_hf({"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                           "num_hidden_layers": 1, "intermediate_size": 48, "vocab_size": 10}).mlp_gated
    assert config_from_hf({"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_inner": 50}).intermediate_size == 50


# ---------------------------------------------------------------------------------------------------
# Tensor-name variants and file formats
# ---------------------------------------------------------------------------------------------------


def _variant(src: Path, dst: Path, edit) -> Path:
    _copy_folder(src, dst)
    tensors = _read_tensors(dst / "model.safetensors")
    save_file(edit(tensors), str(dst / "model.safetensors"), metadata={"format": "pt"})
    return dst


def test_gpt2_key_variants_give_identical_logits(hf_saved, tmp_path):
    _, folder = hf_saved["gpt2"]
    ids = _ids(1)
    reference = _logits(load_pretrained(folder), ids)
    causal = torch.tril(torch.ones(N_POS, N_POS, dtype=torch.bool)).view(1, 1, N_POS, N_POS)

    def with_buffers(t):
        for i in range(L):
            t[f"transformer.h.{i}.attn.bias"] = causal.clone()
            t[f"transformer.h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
        return t

    def stripped(t):
        return {k.removeprefix("transformer."): v for k, v in t.items()}

    def with_head(t):
        t["lm_head.weight"] = t["transformer.wte.weight"].clone()
        return t

    variants = {
        "buffers": with_buffers,
        "no_prefix": stripped,
        "no_prefix_buffers": lambda t: stripped(with_buffers(t)),
        "with_lm_head": with_head,
    }
    stored = set(_read_tensors(folder / "model.safetensors"))
    assert "lm_head.weight" not in stored  # save_pretrained drops the tied head: the "missing lm_head" case
    assert any(k.startswith("transformer.") for k in stored)
    for name, edit in variants.items():
        model = load_pretrained(_variant(folder, tmp_path / name, edit))
        assert torch.equal(_logits(model, ids), reference), name
        assert model.lm_head.weight is model.embed_tokens.weight, name


def test_llama_key_variants(hf_saved, tmp_path):
    _, folder = hf_saved["llama"]
    ids = _ids(2)
    reference = _logits(load_pretrained(folder), ids)
    no_prefix = _variant(folder, tmp_path / "np", lambda t: {k.removeprefix("model."): v for k, v in t.items()})
    assert torch.equal(_logits(load_pretrained(no_prefix), ids), reference)
    tfm = _variant(folder, tmp_path / "tp", lambda t: {("transformer." + k if k.startswith("model.") else k): v
                                                      for k, v in t.items()})
    assert torch.equal(_logits(load_pretrained(tfm), ids), reference)
    # untied: lm_head.weight is required, and its absence is reported by name
    headless = _variant(folder, tmp_path / "nohead", lambda t: {k: v for k, v in t.items() if k != "lm_head.weight"})
    with pytest.raises(CheckpointError, match=r"missing tensors: lm_head\.weight"):
        load_pretrained(headless)


def test_missing_and_unexpected_keys_are_named(hf_saved, tmp_path):
    _, folder = hf_saved["gpt2"]
    missing = _variant(folder, tmp_path / "m", lambda t: {k: v for k, v in t.items() if "h.1.ln_2.bias" not in k})
    with pytest.raises(CheckpointError, match=r"missing tensors: layers\.1\.post_attention_layernorm\.bias"):
        load_pretrained(missing)
    extra = _variant(folder, tmp_path / "u", lambda t: t | {"transformer.h.0.attn.rotary.weight": torch.zeros(3)})
    with pytest.raises(CheckpointError, match=r"unexpected tensors: transformer\.h\.0\.attn\.rotary\.weight"):
        load_pretrained(extra)
    wrong = _variant(folder, tmp_path / "s", lambda t: t | {"transformer.wpe.weight": torch.zeros(N_POS + 1, H)})
    with pytest.raises(CheckpointError, match=r"shape mismatches: transformer\.wpe\.weight"):
        load_pretrained(wrong)


def test_sharded_safetensors(hf_saved, tmp_path):
    hf, folder = hf_saved["llama"]
    hf.save_pretrained(tmp_path, max_shard_size="20KB")
    assert (tmp_path / "model.safetensors.index.json").is_file()
    assert not (tmp_path / "model.safetensors").exists()
    assert len(list(tmp_path.glob("model-*.safetensors"))) > 1
    ids = _ids(3)
    assert torch.equal(_logits(load_pretrained(tmp_path), ids), _logits(load_pretrained(folder), ids))


def test_sharded_index_cannot_escape_folder(hf_saved, tmp_path):
    _copy_folder(hf_saved["gpt2"][1], tmp_path / "c")
    (tmp_path / "c" / "model.safetensors").rename(tmp_path / "outside.safetensors")
    index = {"metadata": {}, "weight_map": {"transformer.wte.weight": "../outside.safetensors"}}
    (tmp_path / "c" / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(UnsafePathError, match="outside.safetensors"):
        load_pretrained(tmp_path / "c")


def test_pytorch_model_bin_plain_state_dict_loads(hf_saved, tmp_path):
    hf, folder = hf_saved["gpt2"]
    shutil.copy(folder / "config.json", tmp_path / "config.json")
    torch.save(hf.state_dict(), tmp_path / "pytorch_model.bin")  # includes the tied lm_head.weight
    ids = _ids(4)
    model = load_pretrained(tmp_path)
    assert torch.equal(_logits(model, ids), _logits(load_pretrained(folder), ids))
    assert model.lm_head.weight is model.embed_tokens.weight


class Payload:  # an arbitrary class: a weights_only load must refuse it
    def __init__(self):
        self.state = {"x": torch.zeros(2)}


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_pickle_with_arbitrary_objects_is_refused(hf_saved, tmp_path):
    shutil.copy(hf_saved["gpt2"][1] / "config.json", tmp_path / "config.json")
    with open(tmp_path / "pytorch_model.bin", "wb") as f:
        pickle.dump(Payload(), f)
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin holds Python objects other than tensors"):
        load_pretrained(tmp_path)
    torch.save({"model": Payload()}, tmp_path / "pytorch_model.bin")  # zip format, same refusal
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin holds Python objects other than tensors"):
        load_pretrained(tmp_path)


def test_truncated_safetensors(hf_saved, tmp_path):
    _copy_folder(hf_saved["gpt2"][1], tmp_path / "c")
    path = tmp_path / "c" / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"model\.safetensors is truncated or not a valid safetensors file"):
        load_pretrained(tmp_path / "c")
    path.write_bytes(data[:5])
    with pytest.raises(CheckpointError, match=r"model\.safetensors is truncated"):
        load_pretrained(tmp_path / "c")


def test_folder_without_config_or_weights(hf_saved, tmp_path):
    shutil.copy(hf_saved["gpt2"][1] / "model.safetensors", tmp_path / "model.safetensors")
    with pytest.raises(CheckpointError, match=r"has no config\.json"):
        load_pretrained(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(hf_saved["gpt2"][1] / "config.json", empty / "config.json")
    with pytest.raises(CheckpointError, match=r"no weights in .*model\.safetensors"):
        load_pretrained(empty)
    with pytest.raises(CheckpointError, match="is a file"):
        load_pretrained(empty / "config.json")


# ---------------------------------------------------------------------------------------------------
# Our own format
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [
    ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS, intermediate_size=48,
                norm_position="post", position_embedding="sinusoidal", max_position_embeddings=N_POS,
                hidden_act="relu", tie_word_embeddings=True),
    ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS, num_key_value_heads=2,
                intermediate_size=48, mlp_gated=True, hidden_act="silu", norm_type="rmsnorm", position_embedding="rope",
                bias=False, attention_bias=True, tie_word_embeddings=False, max_position_embeddings=N_POS),
], ids=["postnorm_sinusoidal_tied", "rope_gqa_untied"])
def test_own_format_round_trip(tmp_path, config):
    torch.manual_seed(0)
    model = CausalLM(config)
    perturb(model, seed=7)
    model.save_pretrained(tmp_path / "m")
    cfg_json = json.loads((tmp_path / "m" / "config.json").read_text())
    assert cfg_json["model_type"] == "explorer"
    stored = set(_read_tensors(tmp_path / "m" / "model.safetensors"))
    assert ("lm_head.weight" in stored) == (not config.tie_word_embeddings)
    loaded = CausalLM.from_pretrained(tmp_path / "m")
    assert loaded.config == config
    ids = _ids(5)
    assert torch.equal(_logits(loaded, ids), _logits(model, ids))
    assert (loaded.lm_head.weight is loaded.embed_tokens.weight) == config.tie_word_embeddings
    save_model(loaded, tmp_path / "again")  # saving a loaded model works too
    assert torch.equal(_logits(load_pretrained(tmp_path / "again"), ids), _logits(model, ids))


def test_dtype_option(hf_saved):
    model = load_pretrained(hf_saved["qwen2"][1], dtype=torch.float64)
    assert {p.dtype for p in model.parameters()} == {torch.float64}
    assert model.lm_head.weight is model.embed_tokens.weight


# ---------------------------------------------------------------------------------------------------
# Unsupported configs
# ---------------------------------------------------------------------------------------------------


def _llama_cfg(**extra):
    base = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
            "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 64, "vocab_size": 99,
            "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}}
    return base | extra


@pytest.mark.parametrize("cfg, field", [
    (_llama_cfg(rope_scaling={"type": "linear", "factor": 2.0}), "rope_scaling"),
    (_llama_cfg(rope_scaling={"rope_type": "llama3", "factor": 8.0}), "rope_scaling"),
    (_llama_cfg(rope_parameters={"rope_theta": 1e4, "rope_type": "yarn", "factor": 4.0}), "rope_parameters"),
    (_llama_cfg(sliding_window=4096), "sliding_window"),
    (_llama_cfg(architectures=["Qwen2ForCausalLM"], model_type="qwen2", use_sliding_window=True,
                sliding_window=128), "use_sliding_window"),
    (_llama_cfg(layer_types=["full_attention", "sliding_attention"]), "layer_types"),
    (_llama_cfg(num_local_experts=8, num_experts_per_tok=2), "num_local_experts"),
    (_llama_cfg(num_experts=4), "num_experts"),
    (_llama_cfg(n_routed_experts=64), "n_routed_experts"),
    (_llama_cfg(architectures=["FalconForCausalLM"], model_type="falcon"), "architectures"),
    (_llama_cfg(architectures=["Qwen3ForCausalLM"], model_type="qwen3", attention_bias=True), "attention_bias"),
    (_llama_cfg(architectures=["MistralForCausalLM"], model_type="mistral", num_local_experts=8), "num_local_experts"),
    ({"model_type": "bert", "hidden_size": 32}, "model_type"),
    (_llama_cfg(attention_bias=True, mlp_bias=False), "attention_bias"),
    ({"architectures": ["GPT2LMHeadModel"], "n_embd": 32, "n_head": 4, "activation_function": "quick_gelu"},
     "activation_function"),
    ({"architectures": ["GPT2LMHeadModel"], "n_embd": 32, "n_head": 4, "add_cross_attention": True},
     "add_cross_attention"),
])
def test_unsupported_fields_are_named(cfg, field):
    with pytest.raises(UnsupportedCheckpointError, match=f"'{field}'"):
        config_from_hf(cfg)


def test_head_dim_other_than_hidden_over_heads_is_kept():
    c = config_from_hf(_llama_cfg(head_dim=16))  # Qwen3-0.6B style: 4 heads of 16 in a 32-wide stream
    assert (c.head_dim, c.hidden_size, c.num_attention_heads) == (16, 32, 4)
    assert CausalLM(c).layers[0].self_attn.q_proj.weight.shape == (64, 32)


def test_unknown_architecture_lists_supported():
    with pytest.raises(ValueError) as err:
        config_from_hf({"architectures": ["FalconForCausalLM"]})
    for name in ("GPT2LMHeadModel", "LlamaForCausalLM", "Qwen2ForCausalLM"):
        assert name in str(err.value)


def test_qwen2_sliding_window_value_without_flag_is_fine():
    cfg = _llama_cfg(architectures=["Qwen2ForCausalLM"], model_type="qwen2", use_sliding_window=False,
                     sliding_window=4096, max_window_layers=28)
    assert config_from_hf(cfg).qkv_bias


# ---------------------------------------------------------------------------------------------------
# Hub ids offline, discovery, path containment
# ---------------------------------------------------------------------------------------------------


def test_hub_id_offline_gives_instructions(tmp_path, monkeypatch):
    with pytest.raises(CheckpointError, match=r"huggingface-cli download someorg/tiny-model --local-dir models/tiny-model"):
        load_pretrained("someorg/tiny-model", cache_dir=tmp_path, local_files_only=True)
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CheckpointError, match="offline"):
        CausalLM.from_pretrained("gpt2", cache_dir=tmp_path)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_pretrained(str(tmp_path / "no" / "such" / "folder"))


def _fake_checkpoint(folder: Path, config: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(b"x" * 100)
    return folder


def test_list_checkpoints(tmp_path, monkeypatch, hf_saved):
    models = tmp_path / "models"
    _copy_folder(hf_saved["gpt2"][1], models / "gpt2-tiny")
    _fake_checkpoint(models / "org" / "llama-ish", _llama_cfg())
    _fake_checkpoint(models / "moe", _llama_cfg(num_local_experts=8))
    (models / "not-a-checkpoint").mkdir()
    outside = _fake_checkpoint(tmp_path / "elsewhere", _llama_cfg())
    (models / "escape").symlink_to(outside, target_is_directory=True)

    infos = {i.name: i for i in list_checkpoints(models, include_hub_cache=False)}
    assert set(infos) == {"gpt2-tiny", "org/llama-ish", "moe"}
    g = infos["gpt2-tiny"]
    assert (g.family, g.architecture, g.source, g.supported) == ("gpt2", "GPT2LMHeadModel", "local", True)
    assert g.size_bytes == sum(p.stat().st_size for p in (models / "gpt2-tiny").iterdir())
    assert g.path == (models / "gpt2-tiny").resolve()
    assert infos["org/llama-ish"].family == "llama"
    assert not infos["moe"].supported and "num_local_experts" in infos["moe"].problem

    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(models))
    assert {i.name for i in list_checkpoints(include_hub_cache=False)} == set(infos)

    # Hub cache snapshots (a hand-made cache in the huggingface_hub layout)
    hub = tmp_path / "hub"
    repo = hub / "models--someorg--tiny"
    snap = _fake_checkpoint(repo / "snapshots" / ("a" * 40), _llama_cfg())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    (repo / "blobs").mkdir()
    hub_infos = [i for i in list_checkpoints(models, hub_cache_dir=hub) if i.source == "hub"]
    assert [(i.name, i.family) for i in hub_infos] == [("someorg/tiny", "llama")]
    assert resolve_checkpoint("someorg/tiny", [models, hub]) == snap.resolve()
    # a missing hub cache is not an error
    assert {i.name for i in list_checkpoints(models, hub_cache_dir=tmp_path / "nohub")} == set(infos)


def test_resolve_checkpoint_containment(tmp_path, hf_saved):
    models = tmp_path / "models"
    _copy_folder(hf_saved["gpt2"][1], models / "gpt2-tiny")
    outside = _copy_folder(hf_saved["gpt2"][1], tmp_path / "secret")
    (models / "escape").symlink_to(outside, target_is_directory=True)
    roots = [models]

    assert resolve_checkpoint("gpt2-tiny", roots) == (models / "gpt2-tiny").resolve()
    assert resolve_checkpoint(str((models / "gpt2-tiny").resolve()), roots) == (models / "gpt2-tiny").resolve()
    for bad in ("../..", "../secret", "/etc", "/etc/passwd", "escape", str(outside), "gpt2-tiny/../../secret"):
        with pytest.raises(UnsafePathError, match="refusing"):
            resolve_checkpoint(bad, roots)
    with pytest.raises(CheckpointError, match="no checkpoint named"):
        resolve_checkpoint("missing-model", roots)

    # a file symlink inside an allowed folder pointing outside is refused when loading with allowed_roots
    linked = models / "linked"
    linked.mkdir()
    shutil.copy(outside / "config.json", linked / "config.json")
    (linked / "model.safetensors").symlink_to(outside / "model.safetensors")
    with pytest.raises(UnsafePathError, match="outside the allowed folders"):
        load_pretrained(resolve_checkpoint("linked", roots), allowed_roots=roots)
    model = load_pretrained(resolve_checkpoint("gpt2-tiny", roots), allowed_roots=roots)
    assert model.config.hidden_size == H
    with pytest.raises(CheckpointError, match="does not exist"):
        load_pretrained("someorg/not-here", allowed_roots=roots)  # never falls back to the Hub in that mode


# ---------------------------------------------------------------------------------------------------
# The load itself: built on the meta device, nothing initialised, tensors assigned from the memory map
# ---------------------------------------------------------------------------------------------------


def _reference_load(hf, family: str) -> CausalLM:
    """The load without the meta device: a model initialised for real, then every converted tensor copied in."""
    from engine.checkpoints import convert_state_dict

    config = config_from_hf(hf.config.to_dict())
    model = CausalLM(config)
    state = convert_state_dict(family, config, hf.state_dict().items())
    model.load_state_dict(state, strict=not config.tie_word_embeddings)
    return model.eval()


def _mapped_files() -> list[tuple[int, int, str]]:
    """(start, end, path) of every file mapping of this process (Linux /proc/self/maps)."""
    out = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6:
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, parts[5]))
    return out


def _is_file_view(tensor: torch.Tensor, path: Path) -> bool:
    ptr = tensor.untyped_storage().data_ptr()
    return any(lo <= ptr < hi and name == str(path.resolve()) for lo, hi, name in _mapped_files())


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_meta_load_equals_a_real_init_load_bit_for_bit(hf_saved, family):
    hf, folder = hf_saved[family]
    ours, ref = load_pretrained(folder), _reference_load(hf, family)
    ids = _ids(3)
    assert torch.equal(_logits(ours, ids), _logits(ref, ids))
    for name, p in ref.state_dict().items():
        assert torch.equal(ours.state_dict()[name], p), name
        assert ours.state_dict()[name].dtype == p.dtype == torch.float32
    assert not any(t.is_meta for t in list(ours.parameters()) + list(ours.buffers()))


def test_no_initialisation_runs_during_a_load(hf_saved, monkeypatch):
    calls = []

    def counting(name, real):
        def wrapper(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)
        return wrapper

    for name in ("normal_", "uniform_", "kaiming_uniform_", "zeros_", "ones_"):
        monkeypatch.setattr(torch.nn.init, name, counting(f"init.{name}", getattr(torch.nn.init, name)))
    for name in ("normal_", "uniform_"):
        monkeypatch.setattr(torch.Tensor, name, counting(f"Tensor.{name}", getattr(torch.Tensor, name)))
    for family in ("gpt2", "llama", "qwen2"):
        load_pretrained(hf_saved[family][1])
    assert calls == []
    torch.manual_seed(0)
    CausalLM(config_from_hf(hf_saved["llama"][0].config.to_dict()))  # the counters do count a real init
    assert calls.count("init.normal_") >= 2 * 7 + 2


def test_tensors_in_our_layout_are_views_of_the_file(hf_saved):
    """No second copy: a tensor stored as we use it is assigned as a view of the memory-mapped file; one that is
    transposed (GPT-2's Conv1D) is a fresh tensor, and the tied head is the embedding itself."""
    llama_file = hf_saved["llama"][1] / "model.safetensors"
    llama = load_pretrained(hf_saved["llama"][1])
    assert all(_is_file_view(p, llama_file) for p in llama.parameters())
    gpt2_file = hf_saved["gpt2"][1] / "model.safetensors"
    gpt2 = load_pretrained(hf_saved["gpt2"][1])
    assert _is_file_view(gpt2.embed_tokens.weight, gpt2_file) and _is_file_view(gpt2.norm.weight, gpt2_file)
    assert not _is_file_view(gpt2.layers[0].self_attn.q_proj.weight, gpt2_file)  # transposed: its own memory
    assert not _is_file_view(gpt2.layers[0].self_attn.q_proj.bias, gpt2_file)  # split from c_attn: its own memory
    assert gpt2.lm_head.weight is gpt2.embed_tokens.weight
    converted = load_pretrained(hf_saved["llama"][1], dtype=torch.float64)  # converted: its own memory
    assert not any(_is_file_view(p, llama_file) for p in converted.parameters())
