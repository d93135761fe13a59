"""CSV downloads (UTF-8 with BOM, descriptive names) and presenter-mode font scaling of the figures."""

import io
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import ui.widgets as widgets
from ui.figures.attention import attention_heatmap, heads_grid
from ui.figures.common import CLOSING, OPENING, PRESENTER_CHART_PX, THEME_TICK_PX, scale_fonts, text_width, wrap_title
from ui.figures.overview import parameter_bar
from ui.i18n import catalogs


def test_csv_is_utf8_with_bom_and_round_trips_chinese():
    data = pd.DataFrame({"token": ["床", "前", "明月"], "p": [0.5, 0.25, 0.25]})
    raw = widgets.csv_bytes(data)
    assert raw.startswith(b"\xef\xbb\xbf")  # the BOM Excel needs to read UTF-8
    back = pd.read_csv(io.BytesIO(raw), encoding="utf-8-sig")
    assert back["token"].tolist() == ["床", "前", "明月"]


def test_export_name_names_page_chart_and_view():
    """Issue 22: downloads were named by a digest (``attn-heatmap-b0eb7ca3.csv``): the name now says the view."""
    assert widgets.export_name("attn.entropy_map", "csv") == "attention-entropy-map.csv"
    name = widgets.export_name("attn.heatmap", "csv", {"layer": 1, "head": 2, "stage": "softmax"})
    assert name == "attention-heatmap-layer1-head2-softmax.csv"
    odd = widgets.export_name("gen.query_row", "html", {"step": 3, "layer": "1/../x", "stage": "a b?"})
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", odd) and odd.endswith(".html") and "/" not in odd, odd


def test_csv_names_its_view_in_columns_and_keeps_the_bom():
    data = pd.DataFrame({"query": ["0 床", "1 前"], "0 床": [1.0, 0.4], "1 前": [0.0, 0.6]})
    raw = widgets.csv_bytes(widgets.with_view(data, {"layer": 1, "head": 2, "stage": "softmax"}))
    assert raw.startswith(b"\xef\xbb\xbf")
    back = pd.read_csv(io.BytesIO(raw), encoding="utf-8-sig")
    assert list(back.columns) == ["layer", "head", "stage", "query", "0 床", "1 前"]
    assert back[["layer", "head", "stage"]].values.tolist() == [[1, 2, "softmax"]] * 2
    assert back["query"].tolist() == ["0 床", "1 前"]
    # a column the table already has is left as it is (the generate table has its own 1-based head)
    kept = widgets.with_view(pd.DataFrame({"head": [3], "weight": [0.5]}), {"layer": 1, "head": 3})
    assert list(kept.columns) == ["layer", "head", "weight"]


def test_pages_pass_the_view_shown(monkeypatch):
    """The attention page's heatmap download is named by, and its CSV names, the layer, head and stage shown."""
    from tests.page_helpers import open_page

    calls = {}
    real = widgets.chart

    def recording(fig, data, key, *args, **kwargs):
        calls[key] = (data, kwargs.get("view"))
        return real(fig, data, key, *args, **kwargs)

    monkeypatch.setattr(widgets, "chart", recording)
    open_page("attention", **{"attn.layer": 2, "attn.head": 3, "attn.stage": "masked"})
    data, view = calls["attn.heatmap"]
    assert widgets.export_name("attn.heatmap", "csv", view) == "attention-heatmap-layer2-head3-masked.csv"
    back = pd.read_csv(io.BytesIO(widgets.csv_bytes(widgets.with_view(data, view))), encoding="utf-8-sig")
    assert set(back["layer"]) == {2} and set(back["head"]) == {3} and set(back["stage"]) == {"masked"}


def test_presenter_scaling_reaches_ticks_titles_colorbars_and_cells():
    df = pd.DataFrame(np.full((6, 6), 0.5, dtype=np.float32))
    fig = scale_fonts(attention_heatmap(df, [str(i) for i in range(6)], "softmax", "t", "x", "y", "p"), 1.5)
    assert fig.layout.xaxis.tickfont.size == round(THEME_TICK_PX * 1.5)
    assert fig.layout.yaxis.title.font.size >= 20 and fig.data[0].colorbar.title.font.size >= 20
    assert fig.data[0].textfont.size == 15  # 10 px cell text, scaled: 6 cells fit
    wide = pd.DataFrame(np.full((22, 22), 0.5, dtype=np.float32))
    fig = scale_fonts(attention_heatmap(wide, [str(i) for i in range(22)], "softmax", "t", "x", "y", "p"), 1.5)
    assert fig.data[0].textfont.size == 10  # 22 columns: larger numbers would run into each other
    grid = scale_fonts(heads_grid([np.eye(3)] * 2, ["a", "b"], "t", "p"), 1.5)
    assert grid.layout.coloraxis.colorbar.tickfont.size == round(THEME_TICK_PX * 1.5)
    assert all(a.font.size >= 16 for a in grid.layout.annotations)  # subplot titles


def test_parameter_chart_in_chinese():
    params = pd.DataFrame({"component": ["embed_tokens", "self_attn", "final norm"], "params": [10, 5, 1],
                           "share": [10 / 16, 5 / 16, 1 / 16]})
    import ui.i18n as i18n

    orig = i18n.current_lang
    i18n.current_lang = lambda: "zh"
    try:
        fig = parameter_bar(params, "t", "x", "y")
    finally:
        i18n.current_lang = orig
    assert list(fig.layout.xaxis.ticktext) == ["词嵌入", "自注意力", "最终归一化"]
    assert list(fig.data[0].customdata) == ["词嵌入 (embed_tokens)", "自注意力 (self_attn)", "最终归一化"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [PRESENTER_CHART_PX, PRESENTER_CHART_PX / 2])
def test_wrapped_titles_fit_and_break_like_text(lang, width):
    """Every chart title of the catalogue, at presenter size: each line fits ``width`` (full or half a 1280-pixel
    screen) unless it is one unbreakable word, the lines put together give the title back, no line starts with a
    closing mark ("）", "，") and none ends with an opening one ("（")."""
    px = 26
    titles = [v for k, v in catalogs()[lang].items() if "title" in k and "{" not in v and len(v) > 8]
    assert len(titles) > 20
    for title in titles:
        fig = go.Figure(layout=dict(title=dict(text=title, font=dict(size=px))))
        lines = wrap_title(fig, width).layout.title.text.split("<br>")
        assert "".join(lines).replace(" ", "") == title.replace(" ", ""), title
        for i, line in enumerate(lines):
            assert text_width(line, px) <= width or " " not in line.strip(), (title, lines)  # or one long word
            assert not (i and line[:1] in CLOSING), (title, lines)
            assert not (i < len(lines) - 1 and line[-1:] in OPENING), (title, lines)


@pytest.mark.parametrize("text", ["query (position and token)", "查询（位置与 token）", "depth (output of)", "loss",
                                  "深度（哪一层的输出）"])
def test_an_axis_title_in_two_even_lines(text):
    """halves(): the same words in at most two lines, the longer no wider than any other split's longer line,
    no line starting with a closing mark or ending with an opening one."""
    from ui.figures.common import CLOSING, OPENING, halves, text_width

    lines = halves(text)
    assert 1 <= len(lines) <= 2 and "".join(lines).replace(" ", "") == text.replace(" ", "")
    if len(lines) == 2:
        assert not lines[1][0] in CLOSING and not lines[0][-1] in OPENING
        longest = max(text_width(line, 1) for line in lines)
        cuts = [i for i in range(1, len(text)) if text[i - 1] == " "]
        assert all(longest <= max(text_width(text[:i].rstrip(), 1), text_width(text[i:].lstrip(), 1)) + 1e-9
                   for i in cuts)
