"""The one path from a view's settings to what it shows: the sidebar values a setting dict gives (the app's
defaults, a preset's values, then the named keys) and the model, input ids, tokens and tokenizer they build.

It knows nothing of Streamlit, sessions or caches: the app passes its cached builders, a lesson step and the
lesson check call it with its defaults (a fresh model each time).
"""

from __future__ import annotations

import json
from typing import Callable

import torch

from engine import CausalLM, ModelConfig
from engine.checkpoints import load_pretrained
from engine.checkpoints.poem import is_poem_model, load_poem_model
from engine.config import PRESET_INPUT_LABELS
from engine.seeding import seeded
from engine.tokenizer import TextTokenizer, bundled_tokenizer
from settings.schema import DEFAULTS, FIXED_KEY, MAX_TOKENS, preset_values, widgets_to_config


def input_limit(config: ModelConfig) -> int:
    """How many input tokens a view keeps: MAX_TOKENS, or fewer when the model's positions end sooner."""
    return min(MAX_TOKENS, config.max_position_embeddings) if config.has_position_limit else MAX_TOKENS


def random_ids(config: ModelConfig, n: int, seed: int) -> torch.Tensor:
    """The random input: ``n`` ids drawn from the vocabulary by a generator seeded with the model's seed. (1, n)"""
    gen = torch.Generator().manual_seed(int(seed))
    return torch.randint(0, config.vocab_size, (1, n), generator=gen)


def random_tokens(preset: str | None, ids: list[int]) -> list[str]:
    """Display tokens of random ids: a tutorial preset's own words when the length matches (the GPT-2
    walkthrough's 猫 吃 鱼), else ``#id``."""
    words = PRESET_INPUT_LABELS.get(preset or "")
    return list(words) if words is not None and len(words) == len(ids) else [f"#{i}" for i in ids]


def sidebar_values(settings: dict) -> tuple[dict, dict]:
    """``(sidebar values, fixed config fields)`` a step's settings give: the app's defaults, the preset's values
    (as picking it does), then the named keys; the fixed fields are the preset's, or ``settings[FIXED_KEY]``
    where given (a side of a comparison holds the sidebar's)."""
    values = {**DEFAULTS, "model.source": "random", "cfg.preset": ""}
    fixed: dict = {}
    preset = settings.get("preset") or settings.get("cfg.preset")
    if preset:
        pv = preset_values(preset)
        fixed = pv.pop(FIXED_KEY, {})
        values.update(pv)
        values["cfg.preset"] = preset
    values.update({k: v for k, v in settings.items() if k not in ("preset", "cfg.preset", FIXED_KEY)})
    if FIXED_KEY in settings:  # a whole view's fields without a slider (a side of a comparison): as they are
        fixed = dict(settings[FIXED_KEY] or {})
    return values, fixed


def build_parts(settings: dict, model_for: Callable | None = None, tokenizer_for: Callable | None = None,
                checkpoint_for: Callable | None = None, trained_for: Callable | None = None) -> tuple:
    """``(config, model, input_ids, tokens, tokenizer)`` of a view's settings, as the sidebar builds them.

    ``trained_for()`` returns the session's trained model (the app only). The other three functions default to
    building afresh (the lesson check and tests); the app passes its caches, so a lesson's answer is computed on the
    very model the page shows.
    """
    values, fixed = sidebar_values(settings)

    def fresh_model(config_json: str, seed: int):
        with seeded(seed):
            return CausalLM(ModelConfig.from_dict(json.loads(config_json))).eval()

    model_for = model_for or fresh_model
    tokenizer_for = tokenizer_for or bundled_tokenizer
    checkpoint_for = checkpoint_for or load_named
    tok = None
    if values["model.source"] == "checkpoint":
        model, tok = checkpoint_for(values["model.checkpoint"])
        config = model.config
    elif values["model.source"] == "trained":
        if trained_for is None:
            raise LookupError("the model trained in the Training lab exists only in the app (pass trained_for)")
        model = trained_for()
        config = model.config
    else:
        config = widgets_to_config(values, fixed)
        model = model_for(config.to_json(), int(values["cfg.seed"]))
    if values["input.mode"] == "random":
        ids = random_ids(config, int(values["input.random_len"]), int(values["cfg.seed"]))
        return config, model, ids, random_tokens(values.get("cfg.preset"), ids[0].tolist()), None
    tok = tok or tokenizer_for(config.vocab_size)
    ids = tok.encode(values["input.text"])[:input_limit(config)]
    return config, model, torch.tensor([ids]), tok.token_strings(ids), tok


def load_named(name: str):
    """A packaged model by name (SmolLM2 from its pip package, the Tang-poem model), with its tokenizer."""
    if is_poem_model(name):
        return load_poem_model(name)
    return load_pretrained(name), TextTokenizer.from_pretrained(name)
