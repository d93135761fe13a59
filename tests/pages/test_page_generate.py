"""AppTest checks of app_pages/generate.py (the KV-cache decode stepper) against independent computations:
full forwards without any cache for the tokens, the attention row and the logits, the cache formula for the
memory calculator."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import torch

from engine import CausalLM
from engine.generation import sampling_filters
from tests.page_helpers import open_page, reference, rerun, state_config, texts
from ui.figures.generate import cache_bars, filter_bars, query_row_heatmap
from settings.schema import DEFAULTS, widgets_to_config

SETTINGS = dict(temperature=0.8, top_k=20, top_p=0.9, min_p=0.05)  # the page's defaults


def press(at, times: int = 1):
    for _ in range(times):
        at.button(key="gen.next").click().run()
        assert not at.exception, at.exception
    return at


def attention_row(charts, title_start: str) -> np.ndarray:
    """The weights given to the attention-row heatmap (key order), after checking its title and that it draws
    them as one row."""
    row = charts(query_row_heatmap)
    assert row.layout["title"]["text"].startswith(title_start), row.layout["title"]["text"]
    weights = row.data.sort_values("key_position")["weight"].to_numpy(dtype=np.float64)
    np.testing.assert_allclose(np.asarray(row.figure.data[0].z, dtype=np.float64), weights[None, :], rtol=1e-6)
    return weights


def cached_positions(charts) -> pd.DataFrame:
    """The cache-bars table by layer (rows) and source (prefill, decode), checked against the bars drawn."""
    bars = charts(cache_bars)
    table = bars.data.pivot(index="layer", columns="source", values="positions")
    for trace, source in zip(bars.figure.data, ("prefill", "decode")):
        assert list(trace.x) == table[source].tolist() and list(trace.y) == table.index.tolist()
    return table


def history(at):
    return next(d.value for d in at.dataframe if "max |Δ| vs recompute" in d.value.columns)


@torch.no_grad()
def reference_run(n: int, seed: int = 0, sample: bool = True, **state) -> tuple[CausalLM, list[int], list[float]]:
    """Tokens and their probabilities from full forwards (no cache), drawing with the per-step generators."""
    from engine.generation import step_generator

    model, ids, _ = reference(**state)
    seq, probs = ids[0].tolist(), []
    for step in range(n):
        logits = model(torch.tensor([seq])).logits[0, -1]  # (V,), full forward every time
        if sample:
            filtered, _ = sampling_filters(logits, **SETTINGS)
            p = torch.softmax(filtered, -1)
            token = int(torch.multinomial(p[None], 1, generator=step_generator(seed, step))[0, 0])
        else:
            p = torch.softmax(logits.double(), -1)
            token = int(logits.argmax())
        seq.append(token)
        probs.append(float(p[token]))
    return model, seq, probs


def test_prefill_then_steps_match_full_forwards(charts):
    at = open_page("generate")
    assert not at.exception
    assert "tokens prefilled" in texts(at) and at.button(key="gen.restart").disabled
    press(at, 3)
    model, seq, probs = reference_run(3)
    run = at.session_state["gen._run"]
    assert run.ids == seq
    hist = history(at)
    np.testing.assert_allclose(hist["probability (drawn from)"], probs, rtol=1e-6)
    assert (hist["max |Δ| vs recompute"] <= 1e-5).all()
    assert "Step 3:" in texts(at) and "max |Δ| = " in texts(at)
    # the attention row is the last row of a full forward's pattern (first layer and head: index 0)
    full = model(torch.tensor([seq]), output_attentions=True).attentions[0][0, 0, -1].detach()  # (S,)
    row = attention_row(charts, "The new query's attention row")
    assert row.shape == (len(seq),) and set(charts.data(query_row_heatmap)["head"]) == {0}
    np.testing.assert_allclose(row, full.numpy(), atol=1e-6)
    # the cache bars: every layer holds the prompt and the 3 decoded positions
    bars = cached_positions(charts)
    T0 = len(seq) - 3
    assert bars["prefill"].tolist() == [T0] * 2 and bars["decode"].tolist() == [3] * 2


def test_layer_head_and_the_flops_badge(charts):
    at = press(open_page("generate", **{"gen.layer": 2, "gen.head": 4}), 2)  # numbered from 1 on screen
    model, seq, _ = reference_run(2)
    full = model(torch.tensor([seq]), output_attentions=True).attentions[1][0, 3, -1].detach()
    row = attention_row(charts, "The new query's attention row, layer 2, head 4")
    np.testing.assert_allclose(row, full.numpy(), atol=1e-6)
    config, _ = state_config()
    S, H, I, V, L = len(seq), config.hidden_size, config.intermediate_size, config.vocab_size, config.num_hidden_layers
    per_token = 2 * 4 * H * H + 2 * H * I * 2  # q, k, v, o (4 heads = 4 KV heads) and the 2-matrix MLP
    cached = L * (per_token + 4 * H * S) + 2 * H * V  # 1 query row vs S keys; logits of one position
    full_flops = L * (S * per_token + 4 * H * S * S) + 2 * H * V
    assert f"{cached:,} with the cache vs {full_flops:,} recomputing" in texts(at)


def test_layers_and_heads_numbered_from_one_like_the_other_pages(charts):
    at = press(open_page("generate"), 1)
    config, _ = state_config()
    L, n_heads = config.num_hidden_layers, config.num_attention_heads
    assert L >= 2 and n_heads >= 2  # the defaults draw both sliders
    # the pickers run 1..L and 1..heads (the Attention page's range), starting on the first layer and head
    assert (at.slider(key="gen.layer").min, at.slider(key="gen.layer").max, at.slider(key="gen.layer").value) == (1, L, 1)
    assert (at.slider(key="gen.head").min, at.slider(key="gen.head").max) == (1, n_heads)
    attention_row(charts, "The new query's attention row, layer 1, head 1")
    # the cache bars: one bar per layer, labelled 1..L (as "block 1..L" on the Layer-norms page)
    assert cached_positions(charts).index.tolist() == list(range(1, L + 1))
    assert charts(cache_bars).layout["title"]["text"].startswith("Cached positions per layer")
    assert charts(cache_bars).layout["yaxis"]["ticktext"] == [str(i) for i in range(1, L + 1)]


def test_greedy_replay_and_restart():
    at = press(open_page("generate", **{"gen.sample": False}), 4)
    _, seq, probs = reference_run(4, sample=False)
    assert at.session_state["gen._run"].ids == seq
    assert "Greedy pick" in texts(at)
    # another setting starts a new run at step 0 (issue 22); the same seed and settings give the same tokens
    rerun(at, **{"gen.sample": True})
    assert at.session_state["gen._run"].ids == seq[:-4]
    first = list(press(at, 4).session_state["gen._run"].ids)
    assert first == reference_run(4)[1]
    rerun(at, **{"gen.seed": 5})
    assert press(at, 4).session_state["gen._run"].ids == reference_run(4, seed=5)[1]
    rerun(at, **{"gen.seed": 0})
    assert press(at, 4).session_state["gen._run"].ids == first
    at.button(key="gen.restart").click().run()
    assert len(at.session_state["gen._run"].ids) == len(seq) - 4 and "Step" not in texts(at).split("\n")[1]


def test_filter_chart_shows_what_each_filter_removed(charts):
    at = open_page("generate", **{"gen.top_k": 3, "gen.top_p": 1.0, "gen.min_p": 0.0, "gen.temperature": 1.0})
    model, ids, _ = reference()
    with torch.no_grad():
        p = torch.softmax(model(ids).logits[0, -1].double(), -1)
    top = torch.topk(p, 10)
    bars = charts(filter_bars)
    assert bars.layout["title"]["text"].startswith("Top 10 tokens of the raw distribution")
    stages = {k: v.sort_values("rank")["probability"].to_numpy() for k, v in bars.data.groupby("stage")}
    raw, after_k = stages["softmax"], stages["top_k"]
    stage_order = list(bars.arguments["stage_labels"])  # the bars: one group per stage, in percent
    for trace, stage in zip(bars.figure.data, stage_order):
        np.testing.assert_allclose(np.asarray(trace.y, dtype=np.float64) / 100, stages[stage], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(raw, top.values.numpy(), rtol=1e-4)
    expected = np.zeros(10)
    expected[:3] = top.values[:3].numpy() / top.values[:3].sum().item()  # the 3 kept, renormalised
    np.testing.assert_allclose(after_k, expected, rtol=1e-4, atol=1e-9)
    V = state_config()[0].vocab_size
    assert f"top-k 3 kept 3 and removed {V - 3:,} tokens" in texts(at)


def test_memory_calculator_numbers():
    at = open_page("generate", **{"gen.ctx": 2048, "gen.dtype": "bfloat16"})
    mem = next(d.value for d in at.dataframe if "KV heads" in d.value.columns).set_index(["model", "attention"])
    # 2 * L * n_kv * head_dim * T * bytes, hand-computed
    assert mem.loc[("SmolLM2-135M", "GQA"), "bytes"] == 2 * 30 * 3 * 64 * 2048 * 2
    assert mem.loc[("GPT-2 small", "MHA"), "bytes"] == 2 * 12 * 12 * 64 * 2048 * 2
    assert mem.loc[("Llama-3-8B", "GQA"), "bytes"] == 2 * 32 * 8 * 128 * 2048 * 2
    assert mem.loc[("Llama-3-8B", "MQA"), "bytes"] == 2 * 32 * 1 * 128 * 2048 * 2
    assert "needs 256 MiB with its GQA" in texts(at) and "1,024 MiB as MHA" in texts(at)
    assert bool(mem.loc[("GPT-2 small", "MHA"), "as configured"]) and not bool(mem.loc[("GPT-2 small", "MQA"), "as configured"])


@pytest.mark.parametrize("state", [
    {"cfg.position_embedding": "rope", "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2},
    {"cfg.norm_position": "post", "cfg.position_embedding": "sinusoidal"},
    {"input.mode": "random", "input.random_len": 5},
])
def test_variants_match_full_forwards(state):
    at = press(open_page("generate", **state), 2)
    assert at.session_state["gen._run"].ids == reference_run(2, **state)[1]
    assert (history(at)["max |Δ| vs recompute"] <= 1e-5).all()
    if "cfg.num_key_value_heads" in state:
        assert "as [1, 2, " in texts(at)  # the cache stores the 2 KV heads, not 8


def test_position_limit_disables_the_button():
    at = open_page("generate", **{"input.mode": "random", "input.random_len": 6, "cfg.fixed": {"max_position_embeddings": 8}})
    press(at, 2)
    assert at.button(key="gen.next").disabled
    assert "positions stop at max_position_embeddings = 8" in texts(at)


def test_chinese_and_presenter_mode():
    at = press(open_page("generate", **{"ui.lang": "zh", "ui.presenter": True}), 1)
    assert "看它生成" in texts(at) and "第 1 步" in texts(at)
    assert not at.dataframe  # presenter mode keeps the charts, folds the tables away
    assert len(at.get("plotly_chart")) == 4


def test_runs_on_a_trained_model():
    config, _ = state_config()
    torch.manual_seed(123)
    trained = CausalLM(config)
    at = open_page("generate")
    rerun(at, **{"train.trained": {"model": trained, "id": "t1"}, "model.source": "trained"})
    press(at, 2)
    assert at.session_state["gen._run"].key[0] != "random"
    _, ids, _ = reference()
    seq = ids[0].tolist()
    with torch.no_grad():
        logits = trained(torch.tensor([seq])).logits[0, -1]
    filtered, _ = sampling_filters(logits, **SETTINGS)
    from engine.generation import step_generator

    first = int(torch.multinomial(torch.softmax(filtered, -1)[None], 1, generator=step_generator(0, 0))[0, 0])
    assert at.session_state["gen._run"].ids[len(seq)] == first


def test_a_link_replays_its_step_count_and_a_new_prompt_starts_at_step_0():
    """Issue 21: ``/generate?gen.steps=5&gen.seed=3`` opened at step 0 (the count was not in the link). Now the
    link's run is replayed to step 5 with seed 3 (the tokens of full forwards drawing with the per-step
    generators), the count stays in the URL as it moves, and a new prompt starts a new run at step 0 (issue 22:
    before, the run was replayed to the old count on the new prompt)."""
    at = open_page("generate", via="switch", query={"gen.steps": "5", "gen.seed": "3"}, defaults=False)
    assert not at.exception, at.exception
    assert at.session_state["gen._run"].ids == reference_run(5, seed=3)[1]
    assert "Step 5:" in texts(at) and at.query_params["gen.steps"] == "5"
    press(at, 2)
    assert at.query_params["gen.steps"] == "7" and at.session_state["gen._run"].ids == reference_run(7, seed=3)[1]
    rerun(at, **{"input.text": "白日依山尽"})
    assert not at.exception, at.exception
    _, ids, _ = reference(**{"input.text": "白日依山尽"})
    assert at.session_state["gen._run"].ids == ids[0].tolist() and at.session_state["gen.steps"] == 0  # no step
    assert "gen.steps" not in at.query_params  # step 0 is the default: not in the link
    press(at, 1)
    assert at.query_params["gen.steps"] == "1"


@pytest.mark.parametrize("bad", ["abc", "-1", "65", "2.5"])
def test_a_bad_step_count_in_a_link_is_named_and_dropped(bad):
    at = open_page("generate", via="switch", query={"ui.lang": "English", "gen.steps": bad}, defaults=False)
    assert not at.exception, at.exception
    warning = " ".join(w.value for w in at.sidebar.warning)
    assert "(`gen.steps`)" in warning and "whole number from 0 to 64" in warning, warning
    assert "gen.steps" not in at.query_params and at.session_state["gen.steps"] == 0
    assert at.session_state["gen._run"].ids == reference()[1][0].tolist()  # the prompt, no step


# ---- issue 22 ----
def test_a_new_prompt_or_sampling_setting_starts_a_new_run_at_step_0():
    """Step 4 times, change the sidebar text and press Next in the same run: one step of the new prompt (before:
    the click was lost, step 0). A sampling setting (temperature, top-k, top-p, min-p, sampling on/off, seed) kept
    the old step count and replayed the new settings to it: now each starts a new run at step 0."""
    at = press(open_page("generate"), 4)
    assert at.session_state["gen.steps"] == 4
    at.sidebar.text_area(key="input.text").set_value("白日依山尽")
    at.button(key="gen.next").click().run()
    assert not at.exception
    prompt = reference(**{"input.text": "白日依山尽"})[1][0].tolist()
    assert at.session_state["gen.steps"] == 1 and len(at.session_state["gen._run"].ids) == len(prompt) + 1
    assert "decode steps: **1**" in texts(at)
    for key, value in (("gen.temperature", 1.5), ("gen.top_k", 5), ("gen.top_p", 0.5), ("gen.min_p", 0.2),
                       ("gen.seed", 9), ("gen.sample", False)):
        press(at, 3)
        assert at.session_state["gen.steps"] >= 3, key
        widget = at.toggle(key=key) if key == "gen.sample" else at.number_input(key=key) if key == "gen.seed" \
            else at.slider(key=key)
        widget.set_value(value).run()
        assert not at.exception, key
        assert at.session_state["gen.steps"] == 0 and at.session_state["gen._run"].ids == prompt, key
        assert "decode steps: **0**" in texts(at) and "gen.steps" not in at.query_params, key
        at.toggle(key="gen.sample").set_value(True).run()  # sampling back on for the next setting


def test_sampling_off_greys_out_the_sampling_settings():
    at = open_page("generate")
    keys = ("gen.temperature", "gen.top_k", "gen.top_p", "gen.min_p")
    assert not any(at.slider(key=k).disabled for k in keys) and not at.number_input(key="gen.seed").disabled
    at.toggle(key="gen.sample").set_value(False).run()
    assert all(at.slider(key=k).disabled for k in keys) and at.number_input(key="gen.seed").disabled
    assert "apply only to sampling" in texts(at)
    zh = rerun(at, **{"ui.lang": "zh"})
    assert "只在采样时起作用" in texts(zh)


def test_the_flops_badge_and_its_caption_count_the_same_square():
    """The badge counted recomputed attention over the full S × S square (what the eager code computes: Q K^T
    for every pair, then the mask) while the caption spoke of the causal triangle's S(S+1)/2 pairs. Both now say
    the square; the badge's numbers are checked against a hand count of the default model's matrix products."""
    at = press(open_page("generate"), 1)
    S = len(at.session_state["gen._run"].ids)
    H, I, V, L, nh, hd = 64, 256, 4000, 2, 4, 16  # the default sidebar model (non-gated GELU, MHA)
    per_token = 2 * (H * nh * hd) * 3 + 2 * (nh * hd * H) + 2 * (H * I) * 2  # q, k, v, o; up, down
    lm_head = 2 * H * V
    cached = L * (per_token + 2 * 2 * nh * 1 * S * hd) + lm_head
    full = L * (S * per_token + 2 * 2 * nh * S * S * hd) + lm_head
    badge = next(m for m in texts(at).split("\n") if "FLOPs of this step" in m)
    assert f"{cached:,} with the cache vs {full:,} recomputing" in badge, badge
    caption = next(c.value for c in at.caption if "only query computed" in c.value)
    assert f"S × S = {S * S:,} query–key scores" in caption and f"discards the {S * (S - 1) // 2:,}" in caption


def test_a_sliding_window_layer_is_counted_with_its_window():
    """Issue 26: a sliding-window layer keeps only w - 1 positions, so the cache caption sums over layers (it said
    ``measured = 2·L·kv·hd·S·b`` however many positions a layer dropped). Window 4 on layer 1, full layer 2."""
    fixed = {"sliding_window": 4, "layer_types": ["sliding_attention", "full_attention"]}
    state = {"cfg.num_hidden_layers": 2, "input.mode": "random", "input.random_len": 6, "cfg.fixed": fixed}
    at = press(open_page("generate", **state), 2)
    cfg = widgets_to_config({**DEFAULTS, **state})  # the sliders' part: KV heads and head_dim
    caption = next(s for s in texts(at).split("\n") if "sliding-window layers keep only the last" in s)
    assert caption.startswith("The 1 full-attention layers") and "the 1 sliding-window layers keep only the last 3" in caption
    S = int(re.search(r"store K and V as \[1, \d+, (\d+), \d+\]", caption).group(1))
    assert S > 3
    per_position = 2 * cfg.kv_heads * cfg.head_dim * 4  # K and V, float32
    measured, formula, unwindowed = (int(re.search(p, caption).group(1).replace(",", "")) for p in (
        r"Measured size ([\d,]+) bytes", r"bytes = ([\d,]+); without", r"without the window ([\d,]+) bytes"))
    assert measured == formula == per_position * (S + 3)  # the full layer keeps S, the sliding one 4 - 1 = 3
    assert unwindowed == per_position * 2 * S


def test_the_memory_calculator_shows_what_a_sliding_window_saves():
    """Issue 26: Gemma 3's 5 local : 1 global layers (window 512) at 32k tokens, and a windowed model in the
    sidebar, each get a "window" row counted layer by layer. Hand-computed: Gemma-3-1B has 26 layers, 1 KV head of
    256; layers 6, 12, 18, 24 are global (32,768 positions), the other 22 keep 511."""
    at = open_page("generate", **{"gen.ctx": 32768, "gen.dtype": "bfloat16", "cfg.num_hidden_layers": 2,
                                  "cfg.fixed": {"sliding_window": 4, "layer_types": ["sliding_attention", "full_attention"]}})
    mem = next(d.value for d in at.dataframe if "KV heads" in d.value.columns).set_index(["model", "attention"])
    gemma = 2 * 1 * 256 * 2 * (4 * 32768 + 22 * 511)
    assert mem.loc[("Gemma-3-1B", "sliding window"), "bytes"] == gemma == 145_729_536
    assert mem.loc[("Gemma-3-1B", "MQA"), "bytes"] == 2 * 26 * 1 * 256 * 32768 * 2
    assert bool(mem.loc[("Gemma-3-1B", "sliding window"), "as configured"])
    assert not bool(mem.loc[("Gemma-3-1B", "MQA"), "as configured"])
    cfg = widgets_to_config({**DEFAULTS, "cfg.num_hidden_layers": 2})  # KV heads and head_dim of the sidebar model
    own = 2 * cfg.kv_heads * cfg.head_dim * 2 * (3 + 32768)  # the sliding layer keeps 3, the full one 32,768
    assert mem.loc[("this model", "sliding window"), "bytes"] == own
    page = texts(at)
    assert "Gemma-3-1B keeps 139 MiB at 32,768 tokens instead of 832 MiB with every layer full: 16.7% of the full" in page


def _pagedown_buttons(at) -> list[str]:
    return [b.key for b in at.button if b.proto.shortcut.lower() == "pagedown"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pagedown_decodes_alone_and_moves_the_lesson_inside_one(lang):
    """One button holds PageDown at a time: "Next token" on its own, the lesson's Next inside a lesson (a
    presentation clicker must not move both), and the line under the buttons says which one it moves."""
    from teaching.course import Pointer
    from ui.strings.generate import EN, ZH
    from ui.teaching.steps import SEAT_KEY, LessonSeat

    said = {"en": EN, "zh": ZH}[lang]
    alone = open_page("generate", lang=lang)
    assert not alone.exception
    assert _pagedown_buttons(alone) == ["gen.next"]
    assert any(said["gen.press"].split("{n}")[1] in c.value for c in alone.caption)
    in_lesson = open_page("generate", lang=lang, **{SEAT_KEY: LessonSeat(active=Pointer("numpy_decoder", 8))})
    assert not in_lesson.exception
    assert _pagedown_buttons(in_lesson) == ["lessons.next"]
    lesson_words = said["gen.press_lesson"].split("{n}")[1]
    assert any(lesson_words in c.value for c in in_lesson.caption)
    assert not any(said["gen.press"].split("{n}")[1] in c.value for c in in_lesson.caption)
