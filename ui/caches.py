"""Every ``st.cache_*`` of the app, and the one key a model is cached under.

The sidebar's shared caches come first (models, tokenizers, traces, checkpoint listings), then the caches of
the pages' views. Models and traces share one store bounded in bytes (ui/bytecache.py). Everything returned
here is shared by all sessions: read only.

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
from collections import OrderedDict
from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

import analysis
from analysis import heads, lens
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
from engine.model import CausalLMOutput
from engine.parity import attention_paths_agree, reference_check
from engine.seeding import seeded
from engine.tokenizer import TextTokenizer, bundled_tokenizer
from ui.budget import heavy_work
from ui.bytecache import byte_cached
from ui.figures.attention import layers_heads_grid
from ui.i18n import t

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


@byte_cached  # ui/bytecache.py: models and traces share one store bounded in bytes (EXPLORER_CACHE_MB)
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
    """Names of the GGUF-packaged models installed here (``["smollm2-135m"]`` after the README install)."""
    return [name for name in GGUF_MODELS if gguf_model_available(name)]


@st.cache_resource(max_entries=2, show_spinner=False)
def load_checkpoint(name: str) -> tuple[CausalLM, TextTokenizer | None]:
    """Load a listed checkpoint by its *name* (never a browser-supplied path) with its tokenizer.

    The folder is looked up among :func:`available_checkpoints` and re-checked to lie inside the allowed
    roots, so the browser can only make the server read checkpoints that are listed.
    """
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


# ---- the pages' views (keyed by the model's key and the token ids) ------------------------------------------------
@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH)
def attention_grid(model: CausalLM, ids: tuple[int, ...], n_grid: int, lang: str) -> go.Figure:
    """The Attention page's layers x heads small multiples (about 2/3 of that page's rerun time when built): cached
    per model, input and language."""
    attentions = cached_trace(model, ids).attentions
    tri = np.triu(np.ones((n_grid, n_grid), dtype=bool), k=1)
    grid = []
    for layer in attentions:
        a = layer[0].float().cpu().numpy()[:, :n_grid, :n_grid]  # (nh, n, n)
        grid.append([np.where(tri, np.nan, a[h]) for h in range(a.shape[0])])
    nh = len(grid[0])
    return layers_heads_grid(grid, [t("attn.layer_short", lang=lang, layer=i + 1) for i in range(len(grid))],
                             [t("attn.head_short", lang=lang, head=h + 1) for h in range(nh)],
                             t("attn.grid_chart", lang=lang, L=len(grid), nh=nh), t("attn.unit_prob", lang=lang))


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=HASH)
def repeat_attentions(model: CausalLM, period: int, exclude: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """Attention patterns of the model on ``period`` random tokens repeated once (shared: read only)."""
    ids = heads.repeated_random_tokens(model.config.vocab_size, period, seed=0, exclude=exclude)  # (1, 2n)
    with torch.no_grad():
        return model(ids, output_attentions=True).attentions


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH)
def role_table(model: CausalLM, ids: tuple[int, ...], period: int, exclude: tuple[int, ...]) -> pd.DataFrame:
    """:func:`analysis.heads.head_roles` of every head on the input and on the repeated random tokens."""
    return heads.head_roles(cached_trace(model, ids).attentions, repeat_attentions(model, period, exclude), period, ids)


LENS_ENTRIES = 16  # lens tables kept (a few hundred KB each for SmolLM2 at 256 tokens)


@st.cache_resource(show_spinner=False)
def _lens_store() -> tuple[OrderedDict, threading.Lock]:
    """Lens tables shared by all sessions, least recently used dropped first. Not ``st.cache_data``: the
    computation drives a progress bar, which a cached function may not touch."""
    return OrderedDict(), threading.Lock()


def lens_table(model: CausalLM, ids: tuple[int, ...], progress: Callable[[float], None]) -> pd.DataFrame:
    """The logit-lens table of this model and input (computed once, with ``progress(fraction)`` calls)."""
    store, lock = _lens_store()
    key = (model_key(model), ids)
    with lock:
        if key in store:
            store.move_to_end(key)
            return store[key]
    table = lens.logit_lens(model, lens.residual_stream(cached_trace(model, ids)), progress=progress)
    with lock:
        store[key] = table
        while len(store) > LENS_ENTRIES:
            store.popitem(last=False)
    return table


@st.cache_resource(max_entries=1, show_spinner=False)
def pretrained_tokenizer(name: str) -> tuple[TextTokenizer | None, str]:
    """A named model's tokenizer (SmolLM2's), or None and the reason it is not available."""
    try:
        return TextTokenizer.from_pretrained(name), ""
    except Exception as err:  # missing package, missing method, broken file: the page says so
        return None, f"{type(err).__name__}: {err}"


@st.cache_resource(max_entries=3, show_spinner=False, hash_funcs=HASH)
def placement_pair(model: CausalLM) -> tuple[CausalLM, CausalLM]:
    """``(pre_model, post_model)`` with the same weights; the given model is one of them, never modified.

    The twin shares the model's tensors, but an entry keeps those tensors alive after the model cache has
    dropped the model: few entries keep the server's memory bounded by the model cache.
    """
    pair = analysis.norm_placement_pair(model)
    for twin in pair:
        if twin is not model:
            register_model(twin, f"{model_key(model)}|{twin.config.norm_position}")
    return pair


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH)
def divergence(pre: CausalLM, post: CausalLM, ids: tuple[int, ...]) -> pd.DataFrame:
    """``analysis.placement_divergence`` on ids ``[1, T]`` (depth 0..L: norms, cosine, relative L2)."""
    return analysis.placement_divergence(pre, post, torch.tensor([ids]))


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH)
def gradients(pre: CausalLM, post: CausalLM, ids: tuple[int, ...]) -> pd.DataFrame:
    """``analysis.gradient_norms`` of the LM loss (labels = input ids) for both placements, stacked with a
    ``placement`` column ("pre"/"post"). Uses autograd.grad: no ``.grad`` is written on the shared models."""
    input_ids = torch.tensor([ids])
    with heavy_work("gradient", pre.config, len(ids), show=False):  # large ones wait for a heavy-job slot
        return pd.concat([analysis.gradient_norms(pre, input_ids).assign(placement="pre"),
                          analysis.gradient_norms(post, input_ids).assign(placement="post")], ignore_index=True)


@st.cache_data(max_entries=256, show_spinner=False)
def last_block_gradient(config_json: str, seed: int, ids: tuple[int, ...], layers: int) -> pd.DataFrame:
    """``analysis.last_block_gradient_by_depth`` for the sidebar's config and seed at one depth (two rows)."""
    config = ModelConfig.from_dict(json.loads(config_json)).replace(num_hidden_layers=layers)
    with heavy_work("gradient", config, len(ids), show=False):  # large ones wait for a heavy-job slot
        return analysis.last_block_gradient_by_depth(config, seed, torch.tensor([ids]), [layers])


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=HASH)
def keep_check(model: CausalLM, ids: tuple[int, ...], k: int) -> dict:
    """:func:`analysis.loss.logits_to_keep_check` on ``ids`` with ``logits_to_keep=k``."""
    return analysis.logits_to_keep_check(model, torch.tensor([ids]), k)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=HASH)
def continuation(model: CausalLM, ids: tuple[int, ...], n: int, temperature: float, greedy: bool,
                 seed: int) -> list[int]:
    """:func:`analysis.next_token.generate`: ``n`` new token ids after the prompt ``ids``."""
    return analysis.generate(model, torch.tensor([ids]), n, temperature=temperature, greedy=greedy, seed=seed)


@st.cache_resource(max_entries=2, show_spinner=False, hash_funcs=HASH)
def reference_rows(model: CausalLM) -> list[dict]:
    """:func:`engine.parity.reference_check` once per loaded model (two forwards on the stored prompts)."""
    return reference_check(model)


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH)
def attention_paths(model: CausalLM, ids: tuple[int, ...], _eager_logits: torch.Tensor) -> dict:
    """:func:`engine.parity.attention_paths_agree` on the text on screen (one SDPA forward; the eager logits
    ``[1, T, V]`` are the trace's)."""
    return attention_paths_agree(model, torch.tensor([ids]), _eager_logits)
