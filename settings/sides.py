"""Two sides of a comparison, A and B: what a side holds, the link parameters of a side, and the presets.

A side is a whole view's settings: the model source (random init, a checkpoint...), the config sliders, the
fields without a slider (:data:`settings.schema.FIXED_KEY`), the seed and the input, as a dict under the
sidebar's own keys (:data:`SIDE_KEYS`). :func:`settings.build.build_parts` builds a side exactly as the sidebar
builds a single view. A link carries the sidebar's side as a single view does and the other side under its
letter (``b.cfg.num_attention_heads=8``: :func:`side_params`), with ``compare=<letter of the sidebar's side>``.
Pure data and functions: no Streamlit, no words of either language.
"""

from __future__ import annotations

from typing import Any, Callable

from settings.schema import (DEFAULTS, FFN_KINDS, FFN_OPTIONS, HIDDEN_OPTIONS, INIT_OPTIONS, MAX_LAYERS,
                             NORM_POSITION_OPTIONS, NORM_TYPE_OPTIONS, POSITION_OPTIONS, VOCAB_OPTIONS, Clamped,
                             divisors, heads_options, link_id, nearest)

SIDES = ("a", "b")
COMPARE_PARAM = "compare"  # the link's: the letter of the side the sidebar (the unprefixed values) shows
SIDE_DEFAULTS: dict[str, Any] = {"model.source": "random", "model.checkpoint": "", "cfg.preset": "", **DEFAULTS}
SIDE_KEYS = tuple(SIDE_DEFAULTS)  # a side's values (and FIXED_KEY, the fields without a slider)
# How a link's value of each key is checked: ui.state.link_problem's kinds; a choice by its options. The
# checkpoint's options are the server's list (known to the app only); "trained" cannot travel in a link.
LINK_SPECS: dict[str, dict] = {
    "model.source": dict(kind="choice", options=["random", "checkpoint"]),
    "model.checkpoint": dict(kind="choice", options=None),
    "cfg.vocab_size": dict(kind="choice", options=VOCAB_OPTIONS),
    "cfg.hidden_size": dict(kind="choice", options=HIDDEN_OPTIONS),
    "cfg.num_hidden_layers": dict(kind="int", lo=1, hi=MAX_LAYERS),
    "cfg.position_embedding": dict(kind="choice", options=POSITION_OPTIONS),
    "cfg.num_attention_heads": dict(kind="int", lo=1, hi=64),  # then moved to a divisor of the width (clamp_heads)
    "cfg.num_key_value_heads": dict(kind="int", lo=1, hi=64),
    "cfg.intermediate_size": dict(kind="choice", options=FFN_OPTIONS),
    "cfg.norm_type": dict(kind="choice", options=NORM_TYPE_OPTIONS),
    "cfg.norm_position": dict(kind="choice", options=NORM_POSITION_OPTIONS),
    "cfg.ffn": dict(kind="choice", options=list(FFN_KINDS)),
    "cfg.tie_word_embeddings": dict(kind="bool"),
    "cfg.initializer_range": dict(kind="choice", options=INIT_OPTIONS),
    "cfg.seed": dict(kind="int", lo=0, hi=2**31 - 1),
    "input.mode": dict(kind="choice", options=["text", "random"]),
    "input.text": dict(kind="text"),
    "input.random_len": dict(kind="int", lo=1, hi=64),
}


def other(side: str) -> str:
    return "b" if side == "a" else "a"


def side_param(side: str, key: str) -> str:
    """The link parameter of ``key`` on the other side ``side``: ``b.cfg.norm_type``."""
    return f"{side}.{key}"


def all_side_params() -> list[str]:
    """Every parameter a link may carry for a side shown beside the sidebar's."""
    return [COMPARE_PARAM] + [side_param(s, k) for s in SIDES for k in LINK_SPECS]


def side_params(values: dict, side: str) -> dict[str, str]:
    """The link parameters of side ``side``'s ``values``: each linked value that is not the app's default, as
    its id (the config sliders only for the sliders' model, the checkpoint always for a checkpoint, as the
    sidebar links them)."""
    source = values.get("model.source", "random")
    out = {}
    for key in LINK_SPECS:
        value = values.get(key, SIDE_DEFAULTS[key])
        if key.startswith("cfg.") and source != "random":
            continue
        if key == "model.checkpoint":
            if source == "checkpoint":
                out[side_param(side, key)] = str(value)
            continue
        if key == "cfg.seed":
            value = int(value)
        if value != SIDE_DEFAULTS[key]:
            out[side_param(side, key)] = link_id(value)
    return out


def clamp_heads(values: dict) -> list[Clamped]:
    """Move the heads and KV heads of ``values`` (in place) to the sidebar's options at that width and position
    kind, as the sidebar does; the values moved."""
    moved = []
    rope = values["cfg.position_embedding"] == "rope"
    for key, options in (("cfg.num_attention_heads", lambda: heads_options(values["cfg.hidden_size"], rope)),
                         ("cfg.num_key_value_heads", lambda: divisors(values["cfg.num_attention_heads"]))):
        opts = options()
        if values[key] not in opts:
            new = nearest(opts, values[key])
            moved.append(Clamped(key, values[key], new))
            values[key] = new
    return moved


# ---- presets: (A, B) from the view on screen, in one click --------------------------------------------------
def _sliders(values: dict, **changes) -> dict:
    """The sliders' model (random init) with ``changes`` (``cfg_norm_type`` for ``cfg.norm_type``), heads clamped."""
    out = {**values, "model.source": "random", **{"cfg." + k[4:]: v for k, v in changes.items()}}
    clamp_heads(out)
    return out


def _gqa(values: dict) -> tuple[dict, dict]:
    """MHA (as many KV heads as heads) against GQA at the same width: KV heads about a quarter of the heads."""
    heads = values["cfg.num_attention_heads"]
    opts = heads_options(values["cfg.hidden_size"], values["cfg.position_embedding"] == "rope")
    if heads < 4 and 4 in opts:
        heads = 4
    groups = [d for d in divisors(heads) if 1 < d < heads] or [1]
    kv = min(groups, key=lambda d: (abs(d - heads / 4), d))
    return (_sliders(values, cfg_num_attention_heads=heads, cfg_num_key_value_heads=heads),
            _sliders(values, cfg_num_attention_heads=heads, cfg_num_key_value_heads=kv))


def _repeated(values: dict) -> tuple[dict, dict]:
    """The same text without and with itself repeated (the second half repeats the first: induction)."""
    text = values["input.text"] if values["input.mode"] == "text" else DEFAULTS["input.text"]
    return {**values, "input.mode": "text", "input.text": text}, {**values, "input.mode": "text", "input.text": text * 2}


SMOLLM2, POEM_MODEL = "smollm2-135m", "tang-poems-small"  # the packaged models' ids (engine.checkpoints)
POEM_LINE = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"  # Li Bai's "Quiet Night Thought", the default text
TRANSLATION = ("I raise my head and gaze at the bright moon; I lower it and think of home.", "举头望明月，低头思故乡。")


def _checkpoint(values: dict, name: str, text: str) -> dict:
    return {**values, "model.source": "checkpoint", "model.checkpoint": name, "input.mode": "text", "input.text": text}


def _trained(values: dict) -> tuple[dict, dict]:
    """The sliders' model at random init against the model the Training lab trained in this session (it starts
    from the sliders' model: same config and seed)."""
    return {**values, "model.source": "random"}, {**values, "model.source": "trained"}


PRESETS: dict[str, Callable[[dict], tuple[dict, dict]]] = {
    "norm": lambda v: (_sliders(v, cfg_norm_type="layernorm"), _sliders(v, cfg_norm_type="rmsnorm")),
    "gqa": _gqa,
    "heads": lambda v: (_sliders(v, cfg_num_attention_heads=4, cfg_num_key_value_heads=4),
                        _sliders(v, cfg_num_attention_heads=8, cfg_num_key_value_heads=8)),
    "rope": lambda v: (_sliders(v, cfg_position_embedding="learned"), _sliders(v, cfg_position_embedding="rope")),
    "repeat": _repeated,
    "trained": _trained,
    "models": lambda v: (_checkpoint(v, SMOLLM2, POEM_LINE), _checkpoint(v, POEM_MODEL, POEM_LINE)),
    "translation": lambda v: (_checkpoint(v, SMOLLM2, TRANSLATION[0]), _checkpoint(v, SMOLLM2, TRANSLATION[1])),
}
NEEDS = {"trained": "trained", "models": SMOLLM2, "translation": SMOLLM2}  # what a preset needs: a run, a model


def preset_sides(name: str, values: dict) -> tuple[dict, dict]:
    """Sides A and B of comparison preset ``name``, made from the view on screen ``values`` (its fields without a
    slider kept)."""
    return PRESETS[name]({**SIDE_DEFAULTS, **values})

