"""The key/value cache: what a decoder keeps from earlier tokens so that a new token costs one row of attention.

At step t a causal decoder needs, in every layer, the keys and values of tokens 0..t. They never change once
computed (token s < t cannot see token t), so they are stored instead of recomputed: the prompt is run once
("prefill") and fills the cache; every later forward feeds only the new token(s), appends their keys and values,
and attends with the new queries over all cached keys.

Convention (transformers' ``past_key_values`` / ``use_cache``, but our own small class): one entry per layer,
``key`` and ``value`` each ``[B, n_kv_heads, T_cached, head_dim]``. With grouped-query attention only the
n_kv_heads heads are stored, not the copies repeated for the query heads, so GQA and MQA shrink the cache by
n_heads / n_kv_heads. Keys are stored after RoPE (their positions are already rotated in).

A sliding-window layer (``layer_types`` "sliding_attention", window w) never looks further back than w - 1
positions, so its entry keeps only the last w - 1 (transformers ``DynamicSlidingWindowLayer``): its memory stays
bounded however long the text grows. :meth:`KVCache.get_seq_length` still counts every position seen (the next
token's position); :meth:`KVCache.num_cached` counts what is stored.

References: Pope et al. 2022, "Efficiently Scaling Transformer Inference" (KV cache memory); transformers
``DynamicCache`` (method names ``update`` and ``get_seq_length``).
"""

from __future__ import annotations

import torch


class KVCache:
    """Per-layer cached keys and values; grows by concatenation along the sequence axis.

    ``update`` mutates the cache (as transformers' caches do): a cache belongs to one generation run.
    """

    def __init__(self) -> None:
        self.key_cache: list[torch.Tensor] = []  # per layer: (B, n_kv_heads, T_cached, head_dim)
        self.value_cache: list[torch.Tensor] = []  # per layer: (B, n_kv_heads, T_cached, head_dim)
        self.seen: dict[int, int] = {}  # layer -> positions seen, for layers whose entry is cut to a window

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int,
               sliding_window: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Append this forward's ``key``/``value`` ``[B, n_kv_heads, T_new, head_dim]`` to layer ``layer_idx``.

        Args:
            sliding_window: w for a sliding-window layer: after this forward only the last ``w - 1`` positions stay
                stored (the next query sees itself and those). ``None`` keeps every position.
        Returns:
            ``(keys, values)`` of the cached positions followed by the new ones, each
            ``[B, n_kv_heads, T_cached + T_new, head_dim]`` (what this forward's queries attend over).
        """
        seen = self.get_seq_length(layer_idx) + key.shape[2]  # positions after this forward
        if layer_idx == len(self.key_cache):  # first forward through this layer: nothing cached yet
            keys, values = key, value
            self.key_cache.append(key)
            self.value_cache.append(value)
        else:
            keys = torch.cat([self.key_cache[layer_idx], key], dim=2)  # (B, nkv, S, hd)
            values = torch.cat([self.value_cache[layer_idx], value], dim=2)  # (B, nkv, S, hd)
        if sliding_window is not None:
            self.seen[layer_idx] = seen
            keep = max(sliding_window - 1, 0)
            self.key_cache[layer_idx] = keys[:, :, keys.shape[2] - min(keep, keys.shape[2]):]  # (B, nkv, <= w-1, hd)
            self.value_cache[layer_idx] = values[:, :, values.shape[2] - min(keep, values.shape[2]):]
        else:
            self.key_cache[layer_idx], self.value_cache[layer_idx] = keys, values
        return keys, values

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Number of positions layer ``layer_idx`` has seen (0 for an empty cache): its stored positions, or for a
        sliding-window layer every position, of which only the last w - 1 are stored."""
        if layer_idx in self.seen:
            return self.seen[layer_idx]
        return self.num_cached(layer_idx)

    def num_cached(self, layer_idx: int = 0) -> int:
        """Number of positions stored in layer ``layer_idx`` (at most w - 1 for a sliding-window layer)."""
        return int(self.key_cache[layer_idx].shape[2]) if layer_idx < len(self.key_cache) else 0

    def __len__(self) -> int:
        """Number of layers with an entry."""
        return len(self.key_cache)

    def __getitem__(self, layer_idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(key, value)`` of one layer, each ``[B, n_kv_heads, T_cached, head_dim]``."""
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def num_bytes(self) -> int:
        """Bytes held by every cached tensor (keys and values of all layers)."""
        return sum(t.numel() * t.element_size() for t in self.key_cache + self.value_cache)


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, seq_len: int, bytes_per_value: int,
                   batch_size: int = 1) -> int:
    """Size of a full cache: ``2 (K and V) * L * n_kv_heads * head_dim * T * bytes per value`` (times B)."""
    return 2 * num_layers * num_kv_heads * head_dim * seq_len * bytes_per_value * batch_size


def cached_positions(config, seq_len: int) -> list[int]:
    """Positions each layer of ``config`` (a :class:`engine.config.ModelConfig`) keeps after ``seq_len`` tokens:
    ``seq_len`` for a full layer, ``min(seq_len, sliding_window - 1)`` for a sliding one (what
    :meth:`KVCache.num_cached` reports)."""
    return [seq_len if config.layer_type(i) == "full_attention" else min(seq_len, config.sliding_window - 1)
            for i in range(config.num_hidden_layers)]


def config_kv_cache_bytes(config, seq_len: int, bytes_per_value: int, batch_size: int = 1) -> int:
    """Size of the cache of ``config`` after ``seq_len`` tokens, with the sliding layers' windows: the sum over
    layers of ``2 * n_kv_heads * head_dim * cached positions * bytes per value`` (times B). Gemma 3's 5 sliding
    : 1 full layers with a 512-token window keep under a fifth of the full cache at 32k tokens
    ((5 * 511 + 32768) / (6 * 32768) = 0.18)."""
    per_position = 2 * config.kv_heads * config.head_dim * bytes_per_value * batch_size
    return per_position * sum(cached_positions(config, seq_len))
