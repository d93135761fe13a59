"""Reading a Llama GGUF file (llama.cpp's format) into a Hugging Face Llama folder.

:func:`write_hf_folder` reads the file with the ``gguf`` package (llama.cpp's own reader), dequantizes every tensor
(Q4_1, Q8_0, F32 ...) to float32 with ``gguf.quants.dequantize``, renames the GGUF tensors onto the Hugging Face
Llama names (so :mod:`engine.checkpoints.llama` loads them), undoes the q/k row permutation
(:func:`unpermute_rope_rows`), and builds the config from the metadata and the byte-level BPE tokenizer from the
vocabulary, merges and token types. :mod:`engine.checkpoints.smollm2` turns that into a verified cache.

References (read, not copied):
    GGUF format and tensor names: ggml ``docs/gguf.md`` ("Standardized tensor names": ``token_embd``,
    ``blk.N.attn_q`` ...). llama.cpp ``convert_hf_to_gguf.py`` ``LlamaModel.permute``: q and k rows are reordered
    from the Hugging Face "rotate half" RoPE layout (pairs ``i, i + head_dim/2``) to llama.cpp's interleaved
    layout (pairs ``2i, 2i+1``). transformers ``modeling_gguf_pytorch_utils.py`` (``_reverse_permute_weights``)
    and ``integrations/gguf/gguf_tokenizer_mapping.py`` (``byte_level_tokenizer``, ``add_gguf_special_tokens``)
    undo the same steps; the parity tests compare against them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import torch

from .errors import CheckpointError, GGUFPackageMissingError

#: ``progress(done, total, stage)``: ``stage`` is one of "read", "tensors", "tokenizer", "write", "verify".
ProgressCallback = Callable[[int, int, str], None]


def _reader(path: Path):
    try:
        from gguf import GGUFReader
    except ImportError as exc:
        raise GGUFPackageMissingError(
            "reading GGUF files needs the 'gguf' package: `pip install -r requirements.txt`"
        ) from exc
    try:
        return GGUFReader(path)
    except Exception as exc:  # ValueError on a bad magic / truncated header, OSError
        raise CheckpointError(f"{path.name} is not a readable GGUF file ({type(exc).__name__}: {exc})") from exc


def _field(reader, key: str, default: Any = None) -> Any:
    """A metadata value (scalar, string or list) by its GGUF key, or ``default`` when absent."""
    field = reader.fields.get(key)
    if field is None:
        return default
    return field.contents()


def unpermute_rope_rows(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's q/k row permutation: interleaved RoPE pairs back to the "rotate half" layout.

    llama.cpp rotates pairs of adjacent dimensions ``(2i, 2i+1)`` of each head; Hugging Face Llama (and our
    :func:`engine.layers.apply_rope`) rotates ``(i, i + head_dim/2)``. The GGUF converter therefore stores row
    ``j * head_dim/2 + i`` of each head at row ``2i + j``. This puts every row back.

    Args:
        weight: ``[n_heads * head_dim, H]`` q_proj (``n_heads`` query heads) or k_proj (``n_kv_heads``) weight.
        n_heads: the number of heads the rows belong to.
    Returns:
        ``[n_heads * head_dim, H]``, a new contiguous tensor.
    """
    rows, H = weight.shape
    head_dim = rows // n_heads
    w = weight.reshape(n_heads, head_dim // 2, 2, H)  # (heads, hd/2, 2, H): GGUF row 2i + j at [i, j]
    return w.transpose(1, 2).reshape(rows, H).contiguous()  # (heads, 2, hd/2, H) -> (heads*hd, H): HF row j*hd/2 + i


def gguf_config_dict(reader) -> dict[str, Any]:
    """A Hugging Face ``config.json`` (``LlamaForCausalLM``) built from the GGUF metadata.

    Keys read: ``general.architecture`` (must be ``llama``), ``llama.block_count``, ``llama.embedding_length``,
    ``llama.feed_forward_length``, ``llama.attention.head_count`` / ``head_count_kv``, ``llama.rope.freq_base``,
    ``llama.attention.layer_norm_rms_epsilon``, ``llama.context_length``, the vocabulary size, and the special
    token ids. The head is tied when the file holds no ``output.weight`` (llama.cpp omits a tied head).

    Raises:
        UnsupportedCheckpointError-like :class:`CheckpointError`: another architecture, RoPE scaling, a rotary
            dimension smaller than the head dimension.
    """
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise CheckpointError(f"GGUF field 'general.architecture' = {arch!r}: only 'llama' GGUF files are supported")
    p = "llama."
    H = int(_field(reader, p + "embedding_length"))
    n_heads = int(_field(reader, p + "attention.head_count"))
    n_kv = int(_field(reader, p + "attention.head_count_kv", n_heads))
    rot = _field(reader, p + "rope.dimension_count")
    if rot is not None and int(rot) != H // n_heads:
        raise CheckpointError(f"GGUF field 'llama.rope.dimension_count' = {rot}: partial RoPE is not supported")
    scaling = _field(reader, p + "rope.scaling.type")
    if scaling not in (None, "none"):
        raise CheckpointError(f"GGUF field 'llama.rope.scaling.type' = {scaling!r}: RoPE scaling is not supported")
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    vocab = _field(reader, p + "vocab_size") or (len(tokens.data) if tokens is not None else None)
    names = {t.name for t in reader.tensors}
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": int(vocab),
        "hidden_size": H,
        "intermediate_size": int(_field(reader, p + "feed_forward_length")),
        "num_hidden_layers": int(_field(reader, p + "block_count")),
        "num_attention_heads": n_heads,
        "num_key_value_heads": n_kv,
        "hidden_act": "silu",
        "max_position_embeddings": int(_field(reader, p + "context_length", 2048)),
        "rms_norm_eps": float(_field(reader, p + "attention.layer_norm_rms_epsilon", 1e-6)),
        "rope_theta": float(_field(reader, p + "rope.freq_base", 10000.0)),
        "tie_word_embeddings": "output.weight" not in names,
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": _field(reader, "tokenizer.ggml.bos_token_id"),
        "eos_token_id": _field(reader, "tokenizer.ggml.eos_token_id"),
        "pad_token_id": _field(reader, "tokenizer.ggml.padding_token_id"),
        "torch_dtype": "float32",
    }


# GGUF name (without the ``blk.N.`` prefix and ``.weight`` suffix) -> Hugging Face Llama name inside a layer.
_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


def hf_name(gguf_name: str) -> str:
    """Hugging Face Llama parameter name of a GGUF tensor (``blk.3.attn_q.weight`` -> ``model.layers.3.self_attn.q_proj.weight``).

    Raises:
        CheckpointError: a tensor name outside the Llama layout.
    """
    stem, _, suffix = gguf_name.rpartition(".")
    if stem in _TOP_NAMES:
        return f"{_TOP_NAMES[stem]}.{suffix}"
    parts = stem.split(".")
    if len(parts) == 3 and parts[0] == "blk" and parts[1].isdigit() and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{suffix}"
    raise CheckpointError(f"GGUF tensor {gguf_name!r} does not belong to the Llama layout")


def gguf_tensors(reader, config: dict[str, Any], unpermute: bool = True, progress: ProgressCallback | None = None):
    """Yield ``(Hugging Face name, float32 tensor)`` for every tensor of the file, dequantized and un-permuted.

    ``gguf.quants.dequantize`` returns the array in row-major order with GGUF's dimensions reversed
    (GGUF ``[H, V]`` is ``[V, H]`` here), which is already PyTorch's ``nn.Linear`` / ``nn.Embedding`` layout.
    ``unpermute=False`` skips :func:`unpermute_rope_rows` (only to show that it matters).
    """
    from gguf.quants import dequantize

    tensors = list(reader.tensors)
    for k, t in enumerate(tensors):
        name = hf_name(t.name)
        array = dequantize(t.data, t.tensor_type).astype("float32", copy=False)  # shape = reversed GGUF shape
        if not array.flags.writeable:  # F32 tensors come back as views of the read-only memory map
            array = array.copy()
        tensor = torch.from_numpy(array.reshape(tuple(int(d) for d in reversed(t.shape))))  # e.g. (V, H)
        if unpermute and name.endswith("self_attn.q_proj.weight"):
            tensor = unpermute_rope_rows(tensor, config["num_attention_heads"])  # (n_heads*hd, H)
        elif unpermute and name.endswith("self_attn.k_proj.weight"):
            tensor = unpermute_rope_rows(tensor, config["num_key_value_heads"])  # (n_kv*hd, H)
        if progress is not None:
            progress(k + 1, len(tensors), "tensors")
        yield name, tensor


def gguf_tokenizer(reader):
    """The byte-level BPE tokenizer (``tokenizers.Tokenizer``) described by the GGUF metadata.

    ``tokenizer.ggml.model`` must be ``gpt2`` (byte-level BPE). The vocabulary is ``tokenizer.ggml.tokens`` (index =
    id), the merges ``tokenizer.ggml.merges`` (``"a b"`` strings, best first). Pieces are split with GPT-2's
    byte-level pre-tokenizer (no prefix space) and decoded byte-level. Tokens whose ``token_type`` is 3 (control:
    ``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>`` ...) are special tokens that text can contain whole.
    No BOS or EOS is added on encoding: ``tokenizer.ggml.add_bos_token`` is false for SmolLM2, and the
    model was trained on text without one (its chat template writes ``<|im_start|>`` itself).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    from ..tokenizer.pieces import bytes_to_unicode

    kind = _field(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise CheckpointError(f"GGUF field 'tokenizer.ggml.model' = {kind!r}: only byte-level BPE ('gpt2') is supported")
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = _field(reader, "tokenizer.ggml.merges") or []
    types = _field(reader, "tokenizer.ggml.token_type") or []
    alphabet = set(bytes_to_unicode().values())
    spelled = {}
    for index, token in enumerate(tokens):  # a token outside GPT-2's byte alphabet is respelled byte by byte
        key = token if set(token) <= alphabet else "".join(bytes_to_unicode()[b] for b in token.encode("utf-8"))
        spelled.setdefault(key, index)
    bpe = models.BPE(vocab=spelled, merges=[tuple(m.split(" ", 1)) for m in merges], dropout=None,
                     continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False)
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=bool(_field(reader, "tokenizer.ggml.add_space_prefix", False)))
    tok.decoder = decoders.ByteLevel()
    control = [AddedToken(t, normalized=False, special=True)
               for t, ty in zip(tokens, types) if ty == 3 and set(t) <= alphabet]  # 3 = CONTROL
    if control:
        tok.add_special_tokens(control)
    return tok


def write_hf_folder(gguf_path: str | Path, folder: str | Path, progress: ProgressCallback | None = None,
                    unpermute: bool = True) -> Path:
    """Convert a Llama GGUF file into a Hugging Face folder: ``config.json``, ``model.safetensors`` (float32),
    ``tokenizer.json`` and ``tokenizer_config.json``.

    Writes directly into ``folder`` (created); :func:`engine.checkpoints.smollm2.convert_gguf` adds the manifest.
    A tied head is not written (``lm_head.weight`` absent, ``tie_word_embeddings`` true), as transformers does.

    Returns:
        ``folder``.
    """
    from safetensors.torch import save_file

    gguf_path, folder = Path(gguf_path), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = progress or (lambda done, total, stage: None)
    report(0, 1, "read")
    reader = _reader(gguf_path)
    report(1, 1, "read")
    config = gguf_config_dict(reader)
    state = {}
    for name, tensor in gguf_tensors(reader, config, unpermute=unpermute, progress=report):
        if name == "lm_head.weight" and config["tie_word_embeddings"]:
            continue
        state[name] = tensor
    report(0, 1, "tokenizer")
    tok = gguf_tokenizer(reader)
    tok.save(str(folder / "tokenizer.json"))
    specials = {key: tok.id_to_token(config[f"{key}_id"]) for key in ("bos_token", "eos_token", "pad_token")
                if config.get(f"{key}_id") is not None}
    unk = _field(reader, "tokenizer.ggml.unknown_token_id")
    if unk is not None:
        specials["unk_token"] = tok.id_to_token(int(unk))
    tokenizer_config = {"tokenizer_class": "GPT2Tokenizer", "add_bos_token": bool(_field(reader, "tokenizer.ggml.add_bos_token", False)),
                        "add_eos_token": bool(_field(reader, "tokenizer.ggml.add_eos_token", False)),
                        "chat_template": _field(reader, "tokenizer.chat_template"), **specials}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
    report(1, 1, "tokenizer")
    del reader
    report(0, 1, "write")
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt", "source": gguf_path.name})
    del state
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    report(1, 1, "write")
    return folder
