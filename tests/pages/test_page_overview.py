"""AppTest of the Overview page's block walkthrough: step 1 names what really enters the chosen block."""

from __future__ import annotations

import pytest
import torch

from tests.page_helpers import open_page, rerun

import analysis
from engine import CausalLM, ModelConfig
from teaching.course import Pointer
from ui.teaching.steps import SEAT_KEY, LessonSeat


def test_walkthrough_step_one_is_the_block_input():
    """Block 1 reads the embedding; block l > 1 reads block l-1's output (hidden_states[l-1], 1-based l)."""
    config = ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                         intermediate_size=32)
    torch.manual_seed(0)
    model = CausalLM(config)
    ids = torch.tensor([[3, 1, 4, 1, 5]])
    out = analysis.run_trace(model, ids)
    with torch.no_grad():
        hs = model(ids, output_hidden_states=True).hidden_states
    for layer in range(3):
        walk = analysis.shape_walkthrough(out, "pre", layer=layer)
        first = walk.iloc[0]
        assert first["name"] == ("embedding" if layer == 0 else "block input")
        norm = float(torch.linalg.vector_norm(hs[layer][0].double(), dim=-1).mean())
        assert first["mean_norm"] == pytest.approx(norm, rel=1e-6)
        if layer:
            assert first["formula"] == f"x = hidden_states[{layer}]"


@pytest.mark.parametrize("lang, embedding, after_block_1", [
    ("en", "embedding", "block input (residual stream after block 1)"),
    ("zh", "词嵌入", "Block 输入（第 1 层之后的残差流）"),
])
def test_page_labels_step_one_per_block(lang, embedding, after_block_1):
    at = open_page("overview", **{"ui.lang": lang, "cfg.num_hidden_layers": 2})
    assert not at.exception, at.exception

    def step_one() -> str:
        return at.dataframe[0].value.iloc[0, 1]  # column 2: "what"

    assert step_one() == embedding
    at = rerun(at, **{"ui.lang": lang, "cfg.num_hidden_layers": 2, "overview.layer": 2})
    assert not at.exception, at.exception
    assert step_one() == after_block_1
    assert any(after_block_1 in m.value for m in at.markdown)
    assert not any(embedding == m for m in at.dataframe[0].value.iloc[:, 1])


@pytest.mark.parametrize("lang, words", [("en", "one token passes through"), ("zh", "每个 token 只经过")])
def test_moe_active_versus_total_parameters(lang, words):
    """With experts the Overview names the parameters one token passes through next to the total: every parameter
    of a fresh model of the preset, less the E - k routed experts per block it skips (counted by hand)."""
    from engine import VARIANT_PRESETS
    from settings.schema import preset_values

    config = VARIANT_PRESETS["minimind_moe"]
    model = CausalLM(config)
    total = sum(p.numel() for p in model.parameters())
    expert = sum(p.numel() for p in model.layers[0].mlp.experts[0].parameters())
    L, E, k = config.num_hidden_layers, config.num_local_experts, config.num_experts_per_tok
    active = total - L * (E - k) * expert
    at = open_page("overview", lang=lang, **{**preset_values("minimind_moe"), "cfg.preset": "minimind_moe"})
    assert not at.exception, at.exception
    line = next(i.value for i in at.info if words in i.value)
    assert f"{active:,}" in line and f"{total:,}" in line and f"{active / total:.1%}" in line
    assert f"{total:,}" in at.get("plotly_chart")[0].proto.spec  # the chart's title names the same total
    dense = open_page("overview", lang=lang)
    assert not dense.exception and not any(words in i.value for i in dense.info)


def test_the_walkthrough_names_its_keys_only_where_they_move_it():
    """PageUp / PageDown move the walk-through on its own, but the lesson inside a lesson: the line says which."""
    from ui.strings.overview import EN

    alone = open_page("overview")
    assert not alone.exception
    head = EN["overview.step_now"].split("(")[1]
    assert any(head in m.value for m in alone.markdown)
    in_lesson = open_page("overview", **{SEAT_KEY: LessonSeat(active=Pointer("minimind_block", 1))})
    assert not in_lesson.exception
    lesson_head = EN["overview.step_now_lesson"].split("(")[1]
    assert any(lesson_head in m.value for m in in_lesson.markdown)
    assert not any(head in m.value for m in in_lesson.markdown)
    # and one button holds each key: the walk-through's alone, the lesson's inside a lesson (a clicker moves one)
    for at, owner in ((alone, "overview"), (in_lesson, "lessons")):
        for key in ("pageup", "pagedown"):
            holders = [b.key for b in at.button if b.proto.shortcut.lower() == key]
            assert [h.split(".")[0] for h in holders] == [owner], (key, holders)
