"""AppTest checks of the real-model views (app_pages/heads.py, app_pages/lens.py) against independent computations on
a fresh model (see page_helpers), on random-init models; the checkpoint runs are in test_checkpoint_pages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.page_helpers import open_page, reference, rerun, texts
from ui.figures.attention import attention_heatmap
from ui.figures.heads import role_map
from ui.figures.lens import lens_heatmap
from ui.figures.massive import massive_chart, sink_heatmap
from ui.figures.tokenizers import tokens_bar

TEXT = "the cat sat on the mat and the cat sat"


def _roles_reference(state: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Previous-token scores, first-token shares [L, nh] on the text and induction scores on the repeat,
    computed here from the attention weights of a fresh model (not with analysis.heads)."""
    model, ids, tok = reference(**state)
    with torch.no_grad():
        att = torch.stack([a[0] for a in model(ids, output_attentions=True).attentions]).double()  # (L, nh, T, T)
    T = att.shape[-1]
    prev = np.mean([att[..., t, t - 1].numpy() for t in range(1, T)], axis=0)
    first = np.mean([att[..., t, 0].numpy() for t in range(1, T)], axis=0)
    exclude = {int(i) for i, t in tok.tokenizer.get_added_tokens_decoder().items() if t.special} | {tok.unk_token_id}
    n = 50
    gen = torch.Generator().manual_seed(0)
    allowed = torch.tensor(sorted(set(range(model.config.vocab_size)) - exclude))
    half = allowed[torch.randint(0, len(allowed), (n,), generator=gen)]
    with torch.no_grad():
        rep = torch.stack([a[0] for a in model(torch.cat([half, half])[None], output_attentions=True).attentions])
    ind = np.mean([rep[..., t, t - n + 1].double().numpy() for t in range(n, 2 * n)], axis=0)
    return prev, first, ind


def role_scores(charts, column: str) -> np.ndarray:
    """The [L, nh] scores the head map colours by, from the roles table given to it (checked against the map)."""
    role = charts(role_map)
    assert role.arguments["column"] == column
    z = role.data.pivot(index="layer", columns="head", values=column).sort_index().sort_index(axis=1).to_numpy()
    np.testing.assert_allclose(np.asarray(role.figure.data[0].z, dtype=np.float64), z, rtol=1e-6, atol=1e-9)
    return z


def test_heads_page_map_matches_independent_scores_and_says_random(charts):
    state = {"input.text": TEXT}
    at = open_page("heads", **state)
    assert not at.exception
    prev, first, ind = _roles_reference(state)
    np.testing.assert_allclose(role_scores(charts, "induction"), ind, atol=1e-6)  # the map opens on induction
    page = texts(at)
    assert "random weights" in page
    assert "No head stands out" in page  # random init: nothing beats twice the uniform reference
    rerun(at, **{"heads.score": "prev_token"})
    assert not at.exception
    np.testing.assert_allclose(role_scores(charts, "prev_token"), prev, atol=1e-6)
    sinks = charts(sink_heatmap)
    assert "position 0" in sinks.layout["title"]["text"]
    np.testing.assert_allclose(sinks.arguments["shares"], first, atol=1e-6)
    np.testing.assert_allclose(np.asarray(sinks.figure.data[0].z, dtype=np.float64), first, atol=1e-6)


def test_heads_page_picker_opens_that_heads_heatmap(charts):
    state = {"input.text": TEXT, "cfg.num_attention_heads": 4}
    at = open_page("heads", **state, **{"heads.layer": 2, "heads.head": 3})
    assert not at.exception
    model, ids, _ = reference(**state)
    with torch.no_grad():
        a = model(ids, output_attentions=True).attentions[1][0, 2].double().numpy()
    heat = charts(attention_heatmap, title="Attention of layer 2, head 3")
    z = heat.data.to_numpy(dtype=np.float64)
    lower = np.tril(np.ones_like(a, dtype=bool))
    np.testing.assert_allclose(z[lower], a[lower], atol=1e-6)
    assert np.isnan(z[~lower]).all()
    np.testing.assert_array_equal(np.asarray(heat.figure.data[0].z, dtype=np.float64), z)
    assert charts(role_map).arguments["selected"] == (1, 2)
    shapes = charts(role_map).layout["shapes"]  # the selected cell is outlined on the map
    assert (shapes[0]["x0"], shapes[0]["y0"]) == (2.5, 1.5)


def test_heads_page_massive_sentence_follows_the_numbers(charts):
    at = open_page("heads", **{"input.text": TEXT})
    assert not at.exception
    assert "No value meets Sun et al.'s criterion" in texts(at)
    chart = charts(massive_chart)
    assert chart.layout["title"]["text"].startswith("Largest |h|")
    ma = chart.data.sort_values("depth")
    model, ids, _ = reference(**{"input.text": TEXT})
    with torch.no_grad():
        o = model(ids, output_hidden_states=True, output_activations=True)
    hs = list(o.hidden_states[:-1]) + [o.activations[f"blocks.{len(o.hidden_states) - 2}.hook_resid_post"]]
    np.testing.assert_allclose(ma["max_abs"], [float(h[0].abs().max()) for h in hs], rtol=1e-6)
    np.testing.assert_allclose(ma["median_abs"], [float(h[0].abs().median()) for h in hs], rtol=1e-6)
    for trace, column in zip(chart.figure.data, ("max_abs", "median_abs")):  # the two lines draw them
        np.testing.assert_allclose(trace.y, ma[column], rtol=1e-6)


@pytest.mark.parametrize("state", [{"input.text": TEXT}, {"input.text": "床前明月光", "cfg.norm_position": "post"}])
def test_lens_page_last_depth_is_the_models_prediction(state, charts):
    at = open_page("lens", **state)
    assert not at.exception
    model, ids, tok = reference(**state)
    with torch.no_grad():
        probs = model(ids).logits[0].double().softmax(-1)  # (T, V)
    lens = charts(lens_heatmap)
    z = lens.data.pivot(index="depth", columns="position", values="p_final").sort_index().to_numpy()
    assert z.shape == (model.config.num_hidden_layers + 1, ids.shape[1])  # p(final prediction) per depth, position
    np.testing.assert_allclose(z[-1], probs.max(-1).values.numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(lens.figure.data[0].z, dtype=np.float64), z, rtol=1e-6)
    page = texts(at)
    assert "raw lens" in page and "random weights" in page


def test_lens_page_window_opens_on_the_last_positions(charts):
    at = open_page("lens")  # the default poem: more tokens than the 20-position window
    assert not at.exception
    _, ids, _ = reference()
    T = ids.shape[1]
    assert T > 20
    ticks = charts(lens_heatmap).layout["xaxis"]["ticktext"]
    assert len(ticks) == 20 and ticks[0].startswith(f"{T - 20} ")
    assert sorted(charts.data(lens_heatmap)["position"].unique()) == list(range(T - 20, T))
    rerun(at, **{"lens.start": 0})
    assert not at.exception and charts(lens_heatmap).layout["xaxis"]["ticktext"][0].startswith("0 ")


def test_lens_figure_escapes_token_text():
    import pandas as pd

    df = pd.DataFrame({"depth": [0, 1], "position": [0, 0], "top_id": [1, 2], "top_prob": [0.5, 0.9],
                       "final_id": [2, 2], "p_final": [0.1, 0.9]})
    fig = lens_heatmap(df, {(0, 1): "<E5>", (0, 2): "<b>"}, ["embed", "block 1"], ["0 <i>"], "t", "x", "y", "p",
                       "{top} {final}")
    cells, hover = fig.data[0].text, fig.data[0].customdata
    assert cells[0][0] == "&lt;E5&gt;" and cells[1][0] == "&lt;b&gt;"  # markup escaped
    assert hover[0][0] == "&lt;E5&gt; &lt;b&gt;" and hover[1][0] == "&lt;b&gt; &lt;b&gt;"
    assert fig.layout.xaxis.ticktext == ("0 &lt;i&gt;",)


def test_lens_cells_keep_long_tokens_inside_their_cell_and_the_whole_token_in_hover():
    import html
    import unicodedata

    import pandas as pd

    from ui.figures.lens import LENS_CELL_WIDTH

    labels = {1: "‹E5 85›", 2: "‹E5 85 A5›", 3: "␣beginning", 4: "床前明月光", 5: "␣the", 6: "床前", 7: "‹8A›床₂/₂",
              8: "‹E5 BA›床₁/₂"}
    df = pd.DataFrame({"depth": [0, 0, 0, 0, 1, 1, 1, 1], "position": [0, 1, 2, 3] * 2, "top_id": [1, 2, 3, 7, 4, 5, 6, 8],
                       "top_prob": [0.5] * 8, "final_id": [1, 2, 3, 7, 4, 5, 6, 8], "p_final": [0.5] * 8})
    by_cell = {(p, i): labels[i] for p, i in zip(df["position"], df["top_id"])}
    fig = lens_heatmap(df, by_cell, ["embed", "block 1"], ["0 a", "1 b", "2 c", "3 d"], "t", "x", "y", "p",
                       "{top}|{final}")
    cells = [html.unescape(c) for row in fig.data[0].text for c in row]

    def width(s: str) -> int:  # display columns: CJK characters are two wide
        return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in s)

    # the whole label "‹E5 85 A5›" is 10 columns, 2 cells wide at 20 positions per screen
    assert max(width(c) for c in cells) <= LENS_CELL_WIDTH, cells
    # bytes without spaces; then the part mark goes (‹8A›床); then the cut
    assert cells == ["‹E585›", "‹E585…", "␣begi…", "‹8A›床", "床前…", "␣the", "床前", "‹E5BA…"]
    hover = [h for row in fig.data[0].customdata for h in row]
    assert [html.unescape(h) for h in hover] == [f"{labels[i]}|{labels[i]}" for i in (1, 2, 3, 7, 4, 5, 6, 8)]


def test_lens_page_tokenizer_comparison_counts(charts):
    at = open_page("lens", **{"input.text": TEXT})
    assert not at.exception
    bar = charts(tokens_bar)
    _, ids, tok = reference(**{"input.text": TEXT})
    assert bar.data["tokens"].iloc[0] == bar.figure.data[0].x[0] == len(tok.encode(TEXT))
    assert f"{len(TEXT.encode())} UTF-8 bytes" in bar.layout["title"]["text"]


def test_views_in_random_id_mode():
    for page in ("heads", "lens"):
        at = open_page(page, **{"input.mode": "random", "input.random_len": 5})
        assert not at.exception
        assert at.get("plotly_chart")
