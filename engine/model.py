"""The decoder block (Pre- or Post-Norm), the causal language model and its typed output.

References:
    Vaswani et al. 2017 (Post-Norm block); Radford et al. 2019, GPT-2 (Pre-Norm block, final norm, tied head);
    Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (why Pre-Norm trains stably);
    Press & Wolf 2017, "Using the Output Embedding to Improve Language Models" (weight tying).
    Output type and argument names follow transformers' ``CausalLMOutput`` and ``logits_to_keep``; activation
    names follow TransformerLens (``blocks.{i}.hook_resid_pre`` ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import torch
import torch.nn as nn

from .config import ModelConfig
from .interventions import Intervention, compile_interventions
from .kv_cache import KVCache
from .layers import (
    ADDITIVE_POSITIONS,
    ATTENTION_FUNCTIONS,
    ATTENTION_MASKS,
    AttentionContext,
    CausalSelfAttention,
    Embedding,
    Linear,
    build_feed_forward,
    build_norm,
    causal_future_mask,
    rope_tables,
    soft_cap,
)
from .loss import mean_supervised_loss, shifted_token_losses
from .recorder import NO_RECORDING, ActivationRecorder


@dataclass
class CausalLMOutput:
    """What :meth:`CausalLM.forward` returns.

    Fields:
        logits: ``[B, T_kept, V]`` unnormalised next-token scores; ``T_kept = T`` unless ``logits_to_keep`` > 0.
        loss: 0-dim tensor, mean cross-entropy (nats) over supervised targets; NaN when every target is
            masked; ``None`` without labels.
        token_losses: ``[B, T-1]``; entry ``[b, t]`` is the loss of predicting ``labels[b, t+1]`` from
            position t, NaN where that target is -100; ``None`` without labels.
        hidden_states: tuple of L+1 tensors ``[B, T, H]``, as in transformers: the embedding output (tokens +
            additive positions), the outputs of blocks 1 .. L-1, and last the final norm's output (block L's
            output after ``norm``, what the LM head reads). Block L's raw output is
            ``activations["blocks.{L-1}.hook_resid_post"]``. ``None`` unless requested.
        attentions: tuple of L tensors ``[B, n_heads, T, S]`` (S = T, or cached + T with a KV cache): softmax
            probabilities (rows sum to 1, exactly 0 on future keys); ``None`` unless requested.
        activations: dict of activations keyed by TransformerLens names (see :data:`ACTIVATION_KEYS_PER_BLOCK`);
            ``None`` unless ``output_activations``. (Not called "cache": that word is kept for the KV cache.)
        past_key_values: the :class:`engine.kv_cache.KVCache` after this forward (keys and values of every
            position so far, ``[B, n_kv_heads, T_cached + T, head_dim]`` per layer); ``None`` unless
            ``use_cache`` or a cache was passed in.
    """

    logits: torch.Tensor
    loss: Optional[torch.Tensor] = None
    token_losses: Optional[torch.Tensor] = None
    hidden_states: Optional[tuple[torch.Tensor, ...]] = None
    attentions: Optional[tuple[torch.Tensor, ...]] = None
    activations: Optional[dict[str, torch.Tensor]] = None
    past_key_values: Optional[KVCache] = None


#: How :meth:`CausalLM.from_pretrained` / :meth:`CausalLM.save_pretrained` read and write files (``"load"``,
#: ``"save"``). :mod:`engine.checkpoints` fills it in when imported (``import engine`` does), so checkpoints import
#: this module and this module never imports checkpoints.
CHECKPOINT_IO: dict[str, Callable] = {}


# Names stored per block when ``output_activations=True`` (prefix ``blocks.{i}.``). Shapes:
#   hook_resid_pre/mid/post, hook_attn_out, hook_mlp_out, ln1/ln2.hook_normalized: [B, T, H]
#   attn.hook_q/k/v: [B, n_heads, T, head_dim] (k, v already repeated for GQA; q, k after RoPE)
#   attn.hook_attn_scores_raw (Q K^T before scaling and masking), attn.hook_attn_scores (scaled, -inf above
#   the diagonal), attn.hook_pattern (softmax): [B, n_heads, T, T]; attn.hook_z: [B, T, n_heads, head_dim]
#   mlp.hook_pre, mlp.hook_post: [B, T, I]
# Variants add: ln1_post/ln2_post.hook_normalized [B, T, H] (sandwich, post_sublayer; the latter has no ln1/ln2) and
#   attn.hook_sink [B, n_heads, T] (attention_sinks). A sliding layer's scores and pattern are [B, n_heads, T, S_layer].
ACTIVATION_KEYS_PER_BLOCK = (
    "hook_resid_pre",
    "ln1.hook_normalized",
    "attn.hook_q",
    "attn.hook_k",
    "attn.hook_v",
    "attn.hook_attn_scores_raw",
    "attn.hook_attn_scores",
    "attn.hook_pattern",
    "attn.hook_z",
    "hook_attn_out",
    "hook_resid_mid",
    "ln2.hook_normalized",
    "mlp.hook_pre",
    "mlp.hook_post",
    "hook_mlp_out",
    "hook_resid_post",
)


def _pre_norm(block: "TransformerBlock", x: torch.Tensor, ctx: AttentionContext, rec: ActivationRecorder):
    """Pre-Norm, the tutorials' two lines: ``x = x + attn(norm(x)); x = x + mlp(norm(x))``."""
    h = rec("ln1.hook_normalized", block.input_layernorm(x))  # (B, T, H)
    mid = x + rec("hook_attn_out", block.self_attn(h, ctx, rec.scope("attn")))  # (B, T, H): residual
    h = rec("ln2.hook_normalized", block.post_attention_layernorm(mid))  # (B, T, H)
    return mid, mid + rec("hook_mlp_out", block.mlp(h, rec.scope("mlp")))  # (B, T, H): residual


def _post_norm(block: "TransformerBlock", x: torch.Tensor, ctx: AttentionContext, rec: ActivationRecorder):
    """Post-Norm: ``x = norm(x + attn(x)); x = norm(x + mlp(x))``."""
    attn_out = rec("hook_attn_out", block.self_attn(x, ctx, rec.scope("attn")))  # (B, T, H)
    mid = rec("ln1.hook_normalized", block.input_layernorm(x + attn_out))  # (B, T, H): norm of the sum
    mlp_out = rec("hook_mlp_out", block.mlp(mid, rec.scope("mlp")))  # (B, T, H)
    return mid, rec("ln2.hook_normalized", block.post_attention_layernorm(mid + mlp_out))  # (B, T, H)


def _sandwich_norm(block: "TransformerBlock", x: torch.Tensor, ctx: AttentionContext, rec: ActivationRecorder):
    """Sandwich (Gemma 2/3): ``x = x + norm(attn(norm(x))); x = x + norm(mlp(norm(x)))``."""
    h = rec("ln1.hook_normalized", block.input_layernorm(x))  # (B, T, H)
    a = block.self_attn(h, ctx, rec.scope("attn"))  # (B, T, H)
    mid = x + rec("hook_attn_out", rec("ln1_post.hook_normalized", block.post_attention_layernorm(a)))  # (B, T, H)
    h = rec("ln2.hook_normalized", block.pre_feedforward_layernorm(mid))  # (B, T, H)
    m = block.mlp(h, rec.scope("mlp"))  # (B, T, H)
    return mid, mid + rec("hook_mlp_out", rec("ln2_post.hook_normalized", block.post_feedforward_layernorm(m)))


def _post_sublayer_norm(block: "TransformerBlock", x: torch.Tensor, ctx: AttentionContext, rec: ActivationRecorder):
    """OLMo-2's order: the norm inside the residual branch, after the sub-layer: ``x = x + norm(attn(x));
    x = x + norm(mlp(x))`` (the stream itself is never normalised before the final norm)."""
    a = block.self_attn(x, ctx, rec.scope("attn"))  # (B, T, H)
    mid = x + rec("hook_attn_out", rec("ln1_post.hook_normalized", block.post_attention_layernorm(a)))  # (B, T, H)
    m = block.mlp(mid, rec.scope("mlp"))  # (B, T, H)
    return mid, mid + rec("hook_mlp_out", rec("ln2_post.hook_normalized", block.post_feedforward_layernorm(m)))


#: ``config.norm_position`` -> (the block's norms, in transformers' names, and the forward that uses them). The
#: forward returns ``(resid_mid, resid_post)``. ``post_attention_layernorm`` is the pre-MLP norm under "pre" (Llama's
#: name) but the norm of attention's output under "sandwich" and "post_sublayer" (Gemma 2's and OLMo-2's).
NORM_PLACEMENTS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "pre": (("input_layernorm", "post_attention_layernorm"), _pre_norm),
    "post": (("input_layernorm", "post_attention_layernorm"), _post_norm),
    "sandwich": (("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"), _sandwich_norm),
    "post_sublayer": (("post_attention_layernorm", "post_feedforward_layernorm"), _post_sublayer_norm),
}


class TransformerBlock(nn.Module):
    """One decoder block: attention and feed-forward sub-layers, each with a residual and a norm.

    Pre-Norm (GPT-2, Llama):   ``x = x + attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x))``
    Post-Norm (Vaswani 2017):  ``x = input_layernorm(x + attn(x)); x = post_attention_layernorm(x + mlp(x))``
    Sandwich (Gemma 2/3) and OLMo-2's post-sub-layer norm: see :data:`NORM_PLACEMENTS`.

    Pre and Post own the same parameters under the same names, so one state_dict loads into either.
    Shapes: ``[B, T, H] -> [B, T, H]``.
    """

    def __init__(self, config: ModelConfig, layer_idx: int = 0):
        super().__init__()
        norms, self._placement = NORM_PLACEMENTS[config.norm_position]
        self.norm_names = norms
        if "input_layernorm" in norms:
            self.input_layernorm = build_norm(config)
        self.self_attn = CausalSelfAttention(config, layer_idx)
        for name in norms[1:] if "input_layernorm" in norms else norms:
            setattr(self, name, build_norm(config))
        self.mlp = build_feed_forward(config)  # MLP, or MoE with num_local_experts > 0

    def forward(self, x: torch.Tensor, ctx: AttentionContext, rec: ActivationRecorder = NO_RECORDING) -> torch.Tensor:
        """``[B, T, H] -> [B, T, H]``. ``ctx`` holds what every layer's attention shares in this forward pass (causal
        mask, RoPE tables, KV cache, eager or SDPA); ``rec`` records under ``blocks.{i}.`` names."""
        x = rec("hook_resid_pre", x)  # (B, T, H); an intervention may replace it (engine.interventions)
        mid, out = self._placement(self, x, ctx, rec)  # (B, T, H) each
        rec("hook_resid_mid", mid)  # (B, T, H)
        return rec("hook_resid_post", out)  # (B, T, H)


class CausalLM(nn.Module):
    """Decoder-only language model: embedding -> positions -> L blocks -> final norm -> LM head.

    Module names follow Llama (``embed_tokens``, ``layers``, ``norm``, ``lm_head``); ``embed_positions`` holds
    learned or sinusoidal positions; RoPE rotates q and k inside attention, with cos/sin tables built once per
    forward (:meth:`attention_context`).

    The final norm ``norm`` is applied in both placements. Under Pre-Norm the residual stream is never
    normalised inside the blocks, so ``norm`` is what scales it before the head. Under Post-Norm every block
    already ends in a norm, so ``norm`` re-normalises an already-normalised stream (with its initial weights it
    is the identity up to eps); it is kept so both placements share one parameter set.

    When ``tie_word_embeddings`` is set, ``lm_head.weight`` *is* ``embed_tokens.weight`` (one Parameter).
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.embed_tokens = Embedding(config.vocab_size, config.hidden_size)
        pos_cls = ADDITIVE_POSITIONS.get(config.position_embedding)
        self.embed_positions = pos_cls(config) if pos_cls is not None else None
        self.layers = nn.ModuleList(TransformerBlock(config, i) for i in range(config.num_hidden_layers))
        self.norm = build_norm(config)
        self.lm_head = Linear(config.hidden_size, config.vocab_size, bias=False)
        self.reset_parameters()
        if config.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight  # the same Parameter: one storage, counted once
        self.eval()  # no dropout anywhere; eval mode states that the weights shown are inference weights

    @classmethod
    def from_pretrained(cls, path_or_repo_id, **kwargs) -> "CausalLM":
        """Load a GPT-2 / Llama / Qwen2 checkpoint folder, a Hub id, a folder written by :meth:`save_pretrained`,
        or a bundled model by its id (``"smollm2-135m"``, ``"tang-poems-small"``: every id of
        ``engine.checkpoints.BUNDLED_MODELS``, loaded offline).

        Delegates to :func:`engine.checkpoints.load_pretrained` (keyword arguments pass through); see there
        for the accepted files and the ``CheckpointError`` cases.
        """
        return CHECKPOINT_IO["load"](path_or_repo_id, **kwargs)

    def save_pretrained(self, folder) -> None:
        """Write ``model.safetensors`` + ``config.json`` (our format) via :func:`engine.checkpoints.save_model`."""
        CHECKPOINT_IO["save"](self, folder)

    def reset_parameters(self) -> None:
        """Normal(0, initializer_range) for linear, embedding and learned position weights; zero biases;
        norm weights 1 and norm biases 0 (GPT-2 / transformers ``_init_weights``). Nothing on the ``meta`` device
        (a checkpoint load assigns every tensor afterwards)."""
        if self.embed_tokens.weight.is_meta:
            return
        std = self.config.initializer_range
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=std)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)
        if self.config.position_embedding == "learned":
            nn.init.normal_(self.embed_positions.weight, mean=0.0, std=std)

    @property
    def device(self) -> torch.device:
        return self.embed_tokens.weight.device

    # ------------------------------------------------------------------------------------------------
    def check_input_ids(self, input_ids: torch.Tensor, past_length: int = 0) -> None:
        """Raise ``ValueError`` for an input the model cannot encode.

        Cases: not a 2-D integer tensor ``[B, T]``; T == 0; an id outside ``[0, vocab_size)`` (named, with the
        size); ``past_length + T`` above ``max_position_embeddings`` for learned or sinusoidal positions.
        """
        if input_ids.dim() != 2 or input_ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"input_ids must be an integer tensor [B, T], got {tuple(input_ids.shape)} {input_ids.dtype}")
        B, T = input_ids.shape
        if B == 0 or T == 0:
            raise ValueError("input_ids is empty: at least one token is needed")
        V = self.config.vocab_size
        lowest, highest = torch.aminmax(input_ids)  # one reduction on the valid path
        if int(lowest) < 0 or int(highest) >= V:
            bad = (input_ids < 0) | (input_ids >= V)  # (B, T)
            raise ValueError(f"token id {int(input_ids[bad][0])} is outside the vocabulary (vocab_size={V})")
        if self.config.has_position_limit and past_length + T > self.config.max_position_embeddings:
            raise ValueError(
                f"sequence length {past_length + T} exceeds max_position_embeddings={self.config.max_position_embeddings} "
                f"for {self.config.position_embedding} positions"
            )

    def attention_context(self, position_ids: torch.Tensor, past_key_values: KVCache | None,
                          attn_implementation: str | None, eager: bool) -> AttentionContext:
        """What every layer's attention shares in one forward pass, built once: the attention function (``eager``:
        weights or activations are wanted), the causal mask over cached + new keys, and the RoPE tables."""
        name = attn_implementation or ("eager" if eager else "sdpa")
        if name not in ATTENTION_FUNCTIONS:
            raise ValueError(f"attn_implementation must be one of {', '.join(ATTENTION_FUNCTIONS)}, got {name!r}")
        if eager and name != "eager":
            raise ValueError(f"attention weights and activations need attn_implementation='eager', got {name!r}")
        T = position_ids.shape[0]
        past = past_key_values.get_seq_length() if past_key_values is not None else 0
        future = causal_future_mask(T, position_ids.device, key_length=past + T)  # (T, S): keys cached + new
        types = {self.config.layer_type(i) for i in range(self.config.num_hidden_layers)} - {"full_attention"}
        masks = {kind: ATTENTION_MASKS[kind](T, past, self.config.sliding_window, position_ids.device)
                 for kind in types}  # e.g. "sliding_attention": (T, min(past, w-1) + T)
        rope, ropes = None, {}
        if self.config.position_embedding == "rope":
            rope = rope_tables(self.config, position_ids, self.config.rope_theta)  # (T, hd) each
            if self.config.rope_local_base_freq is not None and "sliding_attention" in types:
                ropes["sliding_attention"] = rope_tables(self.config, position_ids,
                                                         self.config.rope_local_base_freq)  # (T, hd) each
        return AttentionContext(ATTENTION_FUNCTIONS[name], future, rope, past_key_values, masks, ropes)

    def forward(
        self,
        input_ids: torch.Tensor,
        labels: torch.Tensor | None = None,
        logits_to_keep: int = 0,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        output_activations: bool = False,
        past_key_values: KVCache | None = None,
        use_cache: bool = False,
        attn_implementation: str | None = None,
        interventions: Sequence[Intervention] = (),
    ) -> CausalLMOutput:
        """Run the model.

        Args:
            input_ids: ``[B, T]`` token ids in ``[0, V)``.
            labels: optional ``[B, T]`` ids aligned with ``input_ids`` (shifted once inside); -100 = unsupervised.
            logits_to_keep: 0 keeps all T positions; k > 0 keeps the last ``min(k, T)`` positions.
            output_attentions: also return the L attention patterns.
            output_hidden_states: also return the L+1 hidden states (the last one after the final norm).
            output_activations: also return every activation under TransformerLens names (forces eager attention).
            past_key_values: a :class:`engine.kv_cache.KVCache` from an earlier call: ``input_ids`` are then the
                tokens *after* the cached ones, their positions start at the cache length, and they attend over
                the cached keys too. The cache is updated in place and returned.
            use_cache: return a KV cache (a new one when ``past_key_values`` is None) in ``past_key_values``.
            attn_implementation: a key of :data:`engine.layers.ATTENTION_FUNCTIONS` (``"eager"``, ``"sdpa"``);
                default ``"eager"`` when attentions or activations are requested (only it has weights), else
                ``"sdpa"``.
            interventions: :class:`engine.interventions.HeadAblation` / ``ActivationPatch`` objects applied in this
                call only (where the block records the activation they name; the record holds the edited values).
                Positions are absolute; with a KV cache each call patches the positions it computes.
        Returns:
            :class:`CausalLMOutput`.
        Raises:
            ValueError: invalid ``input_ids`` (see :meth:`check_input_ids`), negative ``logits_to_keep``,
                ``labels`` together with ``logits_to_keep > 0``, labels of the wrong shape or range, an unknown
                ``attn_implementation`` (or ``"sdpa"`` with attentions or activations requested), or an intervention
                the model cannot apply (layer, head, position or value shape); ``TypeError`` for a list entry that is
                not an intervention.
        """
        if use_cache and past_key_values is None:
            past_key_values = KVCache()
        past_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        self.check_input_ids(input_ids, past_length)
        if logits_to_keep < 0:
            raise ValueError(f"logits_to_keep must be >= 0, got {logits_to_keep}")
        if labels is not None and logits_to_keep > 0:
            raise ValueError("labels need logits at every position; use logits_to_keep=0 when passing labels")
        B, T = input_ids.shape
        position_ids = torch.arange(past_length, past_length + T, device=input_ids.device)  # (T,): after the cache
        wanted = None if output_activations else ("attn.hook_pattern",)  # attentions alone: record only the patterns
        record: dict[str, torch.Tensor] | None = {} if output_activations or output_attentions else None
        edits = compile_interventions(interventions, self.config, past_length, cached=past_key_values is not None) \
            if interventions else None
        rec = ActivationRecorder(record, only=wanted, edits=edits)  # per call: nothing is kept on the (shared) modules
        ctx = self.attention_context(position_ids, past_key_values, attn_implementation, eager=record is not None)

        x = rec("hook_embed", self.embed_tokens(input_ids) * self.config.embedding_multiplier)  # (B, T, H)
        if self.embed_positions is not None:
            pos = self.embed_positions(position_ids)  # (T, H)
            rec("hook_pos_embed", pos.expand(B, T, -1))  # (B, T, H)
            x = x + pos  # (B, T, H), broadcast over B
        hidden_states = [x] if output_hidden_states else None
        for i, layer in enumerate(self.layers):
            x = layer(x, ctx, rec.scope(f"blocks.{i}"))  # (B, T, H)
            if hidden_states is not None:
                hidden_states.append(x)

        x = rec("ln_final.hook_normalized", self.norm(x))  # (B, T, H)
        if hidden_states is not None:
            hidden_states[-1] = x  # transformers' convention: the last entry is after the final norm
        if logits_to_keep > 0:
            x = x[:, -logits_to_keep:, :]  # (B, T_kept, H)
        logits = soft_cap(self.lm_head(x), self.config.final_logit_softcapping)  # (B, T_kept, V)

        loss = token_losses = None
        if labels is not None:
            token_losses = shifted_token_losses(logits, labels)  # (B, T-1)
            loss = mean_supervised_loss(token_losses)  # ()
        return CausalLMOutput(
            logits=logits,
            loss=loss,
            token_losses=token_losses,
            hidden_states=tuple(hidden_states) if hidden_states is not None else None,
            attentions=tuple(record[f"blocks.{i}.attn.hook_pattern"] for i in range(len(self.layers)))
            if output_attentions else None,  # each (B, nh, T, S)
            activations=record if output_activations else None,
            past_key_values=past_key_values,
        )

    # ------------------------------------------------------------------------------------------------
    def parameter_breakdown(self) -> list[tuple[str, int]]:
        """Trainable parameter count per component, tied weights counted once.

        Returns:
            ``[(component, count), ...]`` in model order: ``embed_tokens``, ``embed_positions`` (learned only),
            ``layers.{i}.self_attn``, ``layers.{i}.mlp``, ``layers.{i}.norms``, ``norm``, ``lm_head`` (0 when
            tied). The counts sum to the number of distinct parameters, which for a GPT-2-shaped config equals
            ``transformers``' ``GPT2LMHeadModel.num_parameters()``.
        """
        def count(module: nn.Module | None) -> int:
            return sum(p.numel() for p in module.parameters()) if module is not None else 0

        rows = [("embed_tokens", count(self.embed_tokens)), ("embed_positions", count(self.embed_positions))]
        for i, layer in enumerate(self.layers):
            rows.append((f"layers.{i}.self_attn", count(layer.self_attn)))
            rows.append((f"layers.{i}.mlp", count(layer.mlp)))
            rows.append((f"layers.{i}.norms", sum(count(getattr(layer, n)) for n in layer.norm_names)))
        rows.append(("norm", count(self.norm)))
        tied = self.lm_head.weight is self.embed_tokens.weight
        rows.append(("lm_head", 0 if tied else count(self.lm_head)))
        return rows

    def num_parameters(self) -> int:
        """Number of distinct parameters (a tied head counted once)."""
        return sum(p.numel() for p in self.parameters())  # nn.Module.parameters() de-duplicates shared ones
