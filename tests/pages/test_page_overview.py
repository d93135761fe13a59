"""AppTest of the Overview page's block walkthrough: step 1 names what really enters the chosen block."""

from __future__ import annotations

import pytest
import torch

from tests.page_helpers import open_page, rerun

import analysis
from engine import CausalLM, ModelConfig


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
