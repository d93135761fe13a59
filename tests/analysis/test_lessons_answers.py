"""Every answer function of lessons 1-3 against an independent reference (a formula, a hand count, the model's own
parameters or a direct computation), and a changed setting changes the key."""

import dataclasses

import pytest
import torch

import lessons
from analysis.lessons import REGISTRY, StepInputs
from engine import PRESETS, CausalLM


def inputs(settings: dict) -> StepInputs:
    return StepInputs(settings, lambda: lessons.build_parts(settings))


def key(name: str, settings: dict, **args):
    return REGISTRY[name](inputs(settings), **args)


def test_tying_savings_is_the_untied_models_extra_parameters():
    c = PRESETS["minimind_demo"]
    tied = sum(p.numel() for p in CausalLM(c).parameters())  # parameters() yields a shared tensor once
    untied = sum(p.numel() for p in CausalLM(dataclasses.replace(c, tie_word_embeddings=False)).parameters())
    ans = key("tying_savings", {"preset": "minimind_demo"})
    assert ans.correct == untied - tied == 30 * 16
    assert ans.correct not in ans.distractors


def test_a_changed_preset_changes_the_key():
    a = key("tying_savings", {"preset": "minimind_demo"})
    b = key("tying_savings", {"preset": "gpt2_walkthrough"})
    assert a.correct != b.correct
