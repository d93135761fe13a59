"""Every model the checkpoint picker lists by its id loads through ``CausalLM.from_pretrained(id)``, offline.

The model it returns gives the logits of the loader the app used for that id before the one registry
(``engine.checkpoints.bundled.BUNDLED_MODELS``): ``load_poem_model`` for the Tang-poem model (and, independently of
any loader, its safetensors file read into a fresh model), the converted GGUF cache folder loaded as a plain folder
for SmolLM2. The Hub is never asked: ``HF_HUB_OFFLINE=1`` and a ``download_snapshot`` that fails the test.
"""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from engine import CausalLM
from engine.checkpoints import (
    BUNDLED_MODELS,
    GGUF_MODELS,
    available_bundled_models,
    bundled_model,
    config_from_hf,
    ensure_converted,
    load_from_folder,
    read_config,
)
from engine.checkpoints import load as load_module
from engine.checkpoints.poem import POEM_MODELS, load_poem_model

IDS = [pytest.param(name, marks=pytest.mark.smollm2) if name in GGUF_MODELS else name for name in BUNDLED_MODELS]
INPUT = [0, 5, 17, 2, 9, 1]  # tiny: every bundled vocabulary is larger than 17


def _no_hub(*args, **kwargs):
    raise AssertionError(f"a bundled id went to the Hub: download_snapshot{args}")


def _poem_file(name: str) -> CausalLM:
    """The shipped safetensors read straight into a fresh model (no loader of engine.checkpoints involved)."""
    folder = POEM_MODELS[name].folder
    model = CausalLM(config_from_hf(read_config(folder)))
    missing, unexpected = model.load_state_dict(load_file(folder / "model.safetensors"), strict=False)
    assert not unexpected
    assert set(missing) <= ({"lm_head.weight"} if model.config.tie_word_embeddings else set())  # tied: the embedding
    return model.eval()


#: id -> the models the app got for it before: ui.caches.load_checkpoint / settings.build.load_named
APP_LOADERS = {
    **{name: lambda n: [load_poem_model(n)[0], _poem_file(n)] for name in POEM_MODELS},
    **{name: lambda n: [load_from_folder(ensure_converted(n))] for name in GGUF_MODELS},
}


def _logits(model: CausalLM) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([INPUT])).logits


@pytest.fixture(scope="module", params=IDS)
def loaded(request):
    name = request.param
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setattr(load_module, "download_snapshot", _no_hub)
        model = CausalLM.from_pretrained(name)
    return name, model, APP_LOADERS[name](name)


def test_the_picker_lists_exactly_the_bundled_ids_available_here():
    from ui.caches import named_models  # what the checkpoint picker offers first

    assert named_models() == available_bundled_models()
    assert set(APP_LOADERS) == set(BUNDLED_MODELS)  # every id has a reference here


def test_from_pretrained_by_id_gives_the_apps_model(loaded):
    name, model, references = loaded
    assert isinstance(model, CausalLM) and not model.training
    got = _logits(model)
    assert got.shape == (1, len(INPUT), model.config.vocab_size) and torch.isfinite(got).all()
    for reference in references:
        assert reference.config == model.config
        assert torch.equal(got, _logits(reference)), name


def test_ids_are_case_insensitive_and_nothing_else_is_bundled():
    assert bundled_model("Tang-Poems-Small") is BUNDLED_MODELS["tang-poems-small"]
    assert bundled_model("SmolLM2-135M") is BUNDLED_MODELS["smollm2-135m"]
    assert bundled_model("gpt2") is None and bundled_model(None) is None and bundled_model("") is None


def test_a_shipped_model_loads_in_the_dtype_asked_for():
    model = CausalLM.from_pretrained("tang-poems-small", dtype=torch.bfloat16)
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
