"""Every ``st.cache_*`` of the app, and the one key a model is cached under.

This module: the key, and the sidebar's shared caches (models, tokenizers, traces, checkpoint listings);
:mod:`ui.caches.views`: the caches of the pages' views; :mod:`ui.caches.training`: the Training lab's. Models,
traces and the largest views share one store bounded in bytes and by age (server/bytecache.py). Everything returned here is shared by all
sessions: read only.

**Model keys.** A cached function takes the model itself; Streamlit hashes it with :func:`model_key` (the
``hash_funcs`` in :data:`HASH`), the stable key the model was registered under: ``random:<hash of config and
seed>`` (:func:`build_model` registers it), ``checkpoint:<name>`` or ``trained:<job id>`` (the page context,
:class:`ui.context.Explorer`, registers the model it hands to a page), plus a suffix for a model derived from
one of those (the Pre/Post twin). A page never passes a key by hand, so two caches cannot disagree about it.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref

import streamlit as st
import torch

from analysis.trace import finite_report, run_trace
from engine import CausalLM, ModelConfig
from engine.checkpoints import (
    GGUF_MODELS,
    CheckpointError,
    CheckpointInfo,
    config_from_hf,
    default_allowed_roots,
    gguf_model_available,
    list_checkpoints,
    load_pretrained,
    read_config,
    resolve_checkpoint,
)
from engine.checkpoints.poem import POEM_MODELS, is_poem_model, load_poem_model, read_metrics
from engine.model import CausalLMOutput
from engine.seeding import seeded
from engine.tokenizer import TextTokenizer, bundled_tokenizer
from ui.budget import heavy_work
from server.bytecache import byte_cached

# ---- the model key ---------------------------------------------------------------------------------------------
_KEYS: weakref.WeakKeyDictionary[CausalLM, str] = weakref.WeakKeyDictionary()  # forgets a model freed elsewhere
_KEYS_LOCK = threading.Lock()


def register_model(model: CausalLM, key: str) -> CausalLM:
    """Give ``model`` its stable cache key (the same key for the same weights, in every session)."""
    with _KEYS_LOCK:
        _KEYS[model] = key
    return model


def model_key(model: CausalLM) -> str:
    """The key ``model`` was registered under. Raises KeyError for a model that never was (no silent id())."""
    with _KEYS_LOCK:
        key = _KEYS.get(model)
    if key is None:
        raise KeyError("a model without a cache key: build it with build_model or register_model it first")
    return key


def random_model_key(config_json: str, seed: int) -> str:
    return "random:" + hashlib.sha1(f"{config_json}|{seed}".encode()).hexdigest()[:16]


HASH = {CausalLM: model_key}  # hash_funcs of every cache below that takes a model


@byte_cached  # server/bytecache.py: models and traces share one store bounded in bytes (EXPLORER_CACHE_MB)
def build_model(config_json: str, seed: int) -> CausalLM:
    """A randomly initialised model for (config, seed). Shared by all sessions: never mutate it.

    Built under :func:`engine.seeding.seeded`: sessions build concurrently, and unserialised draws from torch's
    global RNG would give weights that match neither seed.
    """
    with seeded(seed):
        model = CausalLM(ModelConfig.from_dict(json.loads(config_json)))
    return register_model(model, random_model_key(config_json, seed))


@st.cache_resource(max_entries=8, show_spinner=False)
def tokenizer_for(vocab_size: int) -> TextTokenizer:
    """The bundled-corpus tokenizer at ``vocab_size`` (trained once per size; GPT-2's size gets a byte-level BPE)."""
    return bundled_tokenizer(vocab_size)


def cached_trace(model: CausalLM, ids: tuple[int, ...], labels: tuple[int, ...] | None = None) -> CausalLMOutput:
    """:func:`analysis.trace.run_trace` of ``model`` on ``ids`` (and ``labels``), kept in the byte-bounded store."""
    return _trace(model, model_key(model), ids, labels)


@byte_cached
def _trace(_model: CausalLM, key: str, ids: tuple[int, ...], labels: tuple[int, ...] | None) -> CausalLMOutput:
    input_ids = torch.tensor([ids])
    lab = torch.tensor([labels]) if labels is not None else None
    with heavy_work("trace", _model.config, len(ids)):  # a large trace waits for a slot of the heavy-job line
        return run_trace(_model, input_ids, lab)


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=HASH)
def nonfinite_parts(model: CausalLM, ids: tuple[int, ...], labels: tuple[int, ...] | None = None) -> list[str]:
    """Names of the trace's outputs holding NaN or Inf (cached with the trace: scanning every hidden state
    and attention pattern on each rerun cost ~10 ms on the attention page)."""
    return [name for name, ok in finite_report(cached_trace(model, ids, labels)).items() if not ok]


@st.cache_data(ttl=30, show_spinner=False)
def available_checkpoints() -> list[CheckpointInfo]:
    """Checkpoint folders under the models directory and the Hugging Face cache (refreshed every 30 s)."""
    return list_checkpoints()


def named_models() -> list[str]:
    """Names of the packaged models: the GGUF ones installed here (``"smollm2-135m"`` after the README install),
    then the ones shipped inside the repository (``"tang-poems-small"``, always there)."""
    return [name for name in GGUF_MODELS if gguf_model_available(name)] + list(POEM_MODELS)


@st.cache_resource(max_entries=4, show_spinner=False)
def shipped_metrics(name: str) -> dict:
    """``metrics.json`` of a model shipped in the repository (what it learned), read after its files were verified."""
    return read_metrics(name)


@st.cache_resource(max_entries=2, show_spinner=False)
def load_checkpoint(name: str) -> tuple[CausalLM, TextTokenizer | None]:
    """Load a listed checkpoint by its *name* (never a browser-supplied path) with its tokenizer.

    The folder is looked up among :func:`available_checkpoints` and re-checked to lie inside the allowed
    roots, so the browser can only make the server read checkpoints that are listed.
    """
    if is_poem_model(name):  # shipped inside the repository, its files checked against their SHA-256 first
        model, tok = load_poem_model(name)
        return register_model(model, f"checkpoint:{name}"), tok
    if name in named_models():  # SmolLM2 from its pip package, read from the verified conversion cache
        return register_model(load_pretrained(name), f"checkpoint:{name}"), TextTokenizer.from_pretrained(name)
    info = {c.name: c for c in available_checkpoints()}.get(name)
    if info is None:
        raise CheckpointError(f"no checkpoint named {name!r} in the models directory")
    roots = default_allowed_roots()
    folder = resolve_checkpoint(info.path, roots)
    model = register_model(load_pretrained(folder, allowed_roots=roots), f"checkpoint:{name}")
    try:
        tok = TextTokenizer.from_folder(folder)
    except FileNotFoundError:
        tok = None  # our own saved models carry no tokenizer: the bundled BPE at their vocab size is used
    return model, tok


def tokenizer_overflow(folder) -> tuple[int, int] | None:
    """``(tokenizer size, model vocabulary)`` when the folder's tokenizer has more tokens than its model has
    embeddings (ids past V would index outside the embedding), else None. Reads only config.json and the
    tokenizer files, never the weights; a folder without a tokenizer uses the bundled one and is fine."""
    try:
        vocab = config_from_hf(read_config(folder)).vocab_size
        tok = TextTokenizer.from_folder(folder).vocab_size
    except Exception:  # noqa: BLE001  unreadable (tokenizers raises plain Exceptions): the load says why
        return None
    return (tok, vocab) if tok > vocab else None


@st.cache_data(ttl=30, show_spinner=False)
def checkpoint_menu() -> tuple[list[CheckpointInfo], list[tuple[str, str, dict]]]:
    """The listed checkpoints split into ``(offered, not offered)``; each one not offered comes with a string
    key and its fields saying why (an unsupported config, or a tokenizer larger than the model's vocabulary)."""
    offered, refused = [], []
    for info in available_checkpoints():
        overflow = tokenizer_overflow(info.path) if info.supported else None
        if not info.supported:
            refused.append((info.name, "model.not_offered.unsupported", {"why": info.problem}))
        elif overflow:
            refused.append((info.name, "model.not_offered.tok_larger",
                            {"tok": f"{overflow[0]:,}", "v": f"{overflow[1]:,}"}))
        else:
            offered.append(info)
    return offered, refused
