"""Shared fixtures of the analysis tests."""

import pytest

import lessons
from analysis.lessons import StepInputs


@pytest.fixture(scope="module")
def built():
    """``built(settings)``: the :class:`StepInputs` of a lesson step's settings, each model built once per module."""
    cache = {}

    def get(settings: dict) -> StepInputs:
        digest = lessons.settings_digest(settings)
        if digest not in cache:
            parts = lessons.build_parts(settings)
            cache[digest] = StepInputs(settings, lambda: parts)
        return cache[digest]

    return get
