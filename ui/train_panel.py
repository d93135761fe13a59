"""The Training lab's first section: train a copy of the sidebar model on the bundled corpus, live; compare it
before and after on the sidebar's input; probe what it learned on the Tang poems.

The run is a :class:`server.jobs.TrainJob` in this browser session's ``st.session_state``; a fragment redraws its live
panel's progress every second and its charts every few seconds, with the time left measured from the run's own
steps. When it ends the page (``app_pages/train.py``) hands the trained model to the sidebar
(:func:`ui.train_common.publish_finished_job`).

References: Loshchilov & Hutter 2019 (AdamW); see ``engine/train/``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import streamlit as st
import torch

import analysis
from analysis.probes import bundled_poem_probe, poem_probe_tokens, punctuation_verdict
from engine import CausalLM
from engine.train import TrainConfig, lr_at
from server import jobs
from server.admission import session_liveness
from server.budget import verdict
from ui.budget import flops, refusal
from ui.caches.training import before_after, poem_probe
from ui.controls import clamp_state, index_slider
from ui.figures.attention import attention_heatmap
from ui.figures.common import HEATMAP_MAX_TOKENS, position_axis
from ui.figures.loss import contribution_bar
from ui.figures.train import grad_heatmap, loss_curve, slot_heatmap
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.state import control
from ui.sidebar import TRAINED_KEY, Explorer
from ui.train_common import (DEFAULT, JOB_KEY, LIVE_EVERY_S, LR_OPTIONS, MIN_STEPS, RACE_KEY, busy,
                             duration, link_job, live_figures, lost_run_note, nearest, num, pct, placement_names,
                             progress, start_stop, token_limit)
from ui.teaching.gate import predict_first
from ui.widgets import chart, revealed, show_figure

BATCH_OPTIONS = [1, 2, 4, 8, 16, 32, 64]
SEQ_OPTIONS = [8, 16, 32, 64, 128, 256]
MAX_STEPS = 5000
HALF_WIDTH_CELL_TEXT = 12  # per-cell numbers on the side-by-side heatmaps only up to this many tokens


@st.fragment(run_every=LIVE_EVERY_S)
def live_train_panel(vocab_size: int) -> None:
    """Progress and ETA of the running job every second; its live loss curve and per-block gradient norms every few
    seconds (ui.train_common.live_figures)."""
    hist = progress(st.session_state.get(JOB_KEY))
    if hist is None:
        return
    if not hist:
        st.caption(t("train.first_step"))
        return
    last = hist[-1]
    st.caption(t("train.live_numbers", loss=num(last.loss), lr=f"{last.lr:.2e}", gnorm=num(last.grad_norm, ".3g"),
                 tps=f"{last.tokens_per_s:,.0f}"))
    if not revealed("train.loss"):  # a lesson's question about the curve is still open: predict first
        predict_first()
        return
    a, b = st.columns(2)
    loss, grads = live_figures(st.session_state[JOB_KEY], lambda: (
        loss_curve(analysis.training_history(hist), t("train.loss_title"), t("train.step_x"), t("train.loss_y"),
                   t("train.train_loss"), t("train.val_loss"), math.log(vocab_size), t("train.uniform")),
        grad_heatmap(analysis.layer_grad_history(hist), t("train.grad_title"), t("train.step_x"),
                     t("train.block_y"), t("train.grad_unit"))))
    with a:
        show_figure(loss, "train.live_loss", columns=2, fill_screen=True)  # presenter mode: the rest of the screen
    with b:
        show_figure(grads, "train.live_grads", columns=2, fill_screen=True)


def train_budget(config, cfg: TrainConfig):
    return verdict("train", config, steps=cfg.steps, batch=cfg.batch_size, seq_len=cfg.seq_len)


# A button callback: it runs before the next script run, so the job exists (and the buttons' disabled state is
# right) as soon as the page redraws. A second click on a stale Start never starts a second job, and a run over
# the server's budget (engine/cost.py) is never started, even from a stale button.
# A run on the poems measures what it learned in its own process right after its steps (the phase "after"),
# so the results are complete when it ends.
def start_training(model: CausalLM, token_ids: np.ndarray, cfg: TrainConfig, corpus: str, model_key: str) -> None:
    if not busy() and cfg is not None and train_budget(model.config, cfg).ok:
        probe = corpus == "zh"
        after = functools.partial(bundled_poem_probe, vocab_size=model.config.vocab_size, context_len=cfg.seq_len)
        settings = {"steps": cfg.steps, "lr": cfg.learning_rate, "warmup": cfg.warmup_steps,
                    "batch": cfg.batch_size, "seq_len": cfg.seq_len}
        st.session_state[JOB_KEY] = jobs.start_training(
            model, torch.as_tensor(token_ids), cfg, corpus, model_key, alive=session_liveness(),
            after=after if probe else None, after_tokens=poem_probe_tokens(cfg.seq_len) if probe else 0,
            record=True, settings=settings)


RESTORE = {"steps": "train.steps", "lr": "train.lr", "warmup": "train.warmup", "batch": "train.batch",
           "seq_len": "train.seq_len", "corpus": "train.corpus"}



def warmup_help(steps: int) -> str:
    """The warmup help with the schedule's own numbers (``lr_at``) at the current steps, warmup and peak rate."""
    peak = float(st.session_state.get("train.lr", DEFAULT.learning_rate))
    w = int(st.session_state.get("train.warmup", DEFAULT.warmup_steps))
    try:
        cfg = TrainConfig(steps=steps, learning_rate=peak, warmup_steps=w)
    except ValueError:  # an out-of-range value is clamped and reported elsewhere
        cfg = TrainConfig(steps=steps, learning_rate=DEFAULT.learning_rate, warmup_steps=0)
    key = "train.warmup.help" if cfg.warmup_steps else "train.warmup.help_off"
    return t(key, peak=f"{cfg.learning_rate:g}", w=cfg.warmup_steps, first=f"{lr_at(1, cfg):.3g}",
             floor=f"{cfg.min_lr_ratio:.0%}")


def training_controls(limit: int) -> TrainConfig | None:
    """Steps, learning rate, warmup, batch size and sequence length; returns the validated TrainConfig."""
    c1, c2, c3 = st.columns(3)
    clamp_state("train.steps", MIN_STEPS, MAX_STEPS, t("train.steps.label"), c1)
    steps = int(control(c1.number_input, t("train.steps.label"), "train.steps", DEFAULT.steps, kind="int",
                        bind=False, min_value=MIN_STEPS, max_value=MAX_STEPS, step=10, help=t("train.steps.help")))
    clamp_state("train.warmup", 0, steps - 1, t("train.warmup.label"), c1)
    warmup = int(control(c1.number_input, t("train.warmup.label"), "train.warmup",
                         min(DEFAULT.warmup_steps, steps - 1), kind="int", bind=False, min_value=0,
                         max_value=steps - 1, step=10, help=warmup_help(steps)))
    with c2:
        nearest(LR_OPTIONS, "train.lr", DEFAULT.learning_rate)
    lr = float(control(c2.select_slider, t("train.lr.label"), "train.lr", DEFAULT.learning_rate, kind="choice",
                       options=LR_OPTIONS, format_func=lambda v: f"{v:g}", bind=False, help=t("train.lr.help")))
    with c2:
        nearest(BATCH_OPTIONS, "train.batch", DEFAULT.batch_size)
    batch = int(control(c2.select_slider, t("train.batch.label"), "train.batch", DEFAULT.batch_size, kind="choice",
                        options=BATCH_OPTIONS, bind=False, help=t("train.batch.help")))
    seq_opts = [s for s in SEQ_OPTIONS if s <= limit] or [limit]
    seq_default = DEFAULT.seq_len if DEFAULT.seq_len in seq_opts else seq_opts[-1]
    with c3:
        nearest(seq_opts, "train.seq_len", seq_default)
    seq = int(control(c3.select_slider, t("train.seq_len.label"), "train.seq_len", seq_default, kind="choice",
                      options=seq_opts, bind=False, help=t("train.seq_len.help", limit=limit)))
    c3.caption(t("train.fixed", wd=DEFAULT.weight_decay, clip=DEFAULT.grad_clip, val=f"{DEFAULT.val_fraction:.0%}"))
    try:
        return TrainConfig(steps=steps, learning_rate=lr, warmup_steps=warmup, batch_size=batch, seq_len=seq,
                           eval_every=max(1, steps // 10), seed=DEFAULT.seed)
    except ValueError as err:
        st.warning(t("train.bad_settings", error=str(err)))
        return None


def lab_view(ctx: Explorer, ids: np.ndarray, corpus: str) -> None:
    """The trainer: settings, Start / Stop, the live panel while it runs, the results once it ended."""
    job = st.session_state.get(JOB_KEY)
    V = ctx.config.vocab_size
    n_params = sum(p.numel() for p in ctx.model.parameters())
    what = t("train.source.trained") if ctx.source == "trained" else t("train.source.random")
    with st.expander(t("train.settings"), expanded=not presenter_mode()):  # folded on a projector: room for the charts
        st.caption(t("train.what", what=what, params=f"{n_params:,}", L=ctx.config.num_hidden_layers,
                     H=ctx.config.hidden_size, V=V, placement=placement_names()[ctx.config.norm_position]))
        cfg = training_controls(token_limit(ctx.config))
    if cfg is not None and len(ids) * (1 - cfg.val_fraction) < cfg.seq_len * 2:
        st.warning(t("train.too_short", n=len(ids), seq=cfg.seq_len))
    cost = train_budget(ctx.config, cfg) if cfg is not None else None
    if cost is not None and not cost.ok:
        st.error(refusal(cost))
    start_stop(JOB_KEY, t("train.start"), "train.start", "train.stop", cost is not None and cost.ok, start_training,
               (ctx.model, ids, cfg, corpus, ctx.model_key), RACE_KEY, t("train.race_running"))
    link_job("train", job)
    if job is None:
        if not lost_run_note("train", RESTORE):
            st.caption(t("train.not_started", work=flops(cost.cost.gflop) if cost is not None else "—"))
        return
    if job.running:
        live_train_panel(V)
        return
    results(ctx, job)


def results(ctx: Explorer, job: jobs.TrainJob) -> None:
    """The finished (or stopped, or failed) run: summary, full curves, before/after, what it learned."""
    if job.error is not None:
        st.error(t("train.failed", error=job.error))
        return
    if job.status == "cancelled":
        st.info(t("train.cancelled"))
        return
    r = job.result
    if r is None or r.steps_done == 0:
        st.info(t("train.no_steps"))
        return
    st.subheader(t("train.results_title"))
    msg = t("train.stopped_at", done=r.steps_done, total=r.config.steps) if r.stopped else t("train.finished", total=r.config.steps)
    if revealed("train.loss"):  # the losses wait for a lesson's answer about the curve
        msg += " " + t("train.summary", v0=num(r.initial_val_loss), v1=num(r.final_val_loss),
                       secs=duration(r.elapsed_s), corpus=t(f"train.corpus.{job.corpus}"))
    st.success(msg)
    trained_now = st.session_state.get(TRAINED_KEY, {}).get("id") == job.id
    if trained_now and ctx.model_key == f"trained:{job.id}":
        st.caption(t("train.published"))
    elif trained_now:
        st.caption(t("train.published_other"))
    hist = analysis.training_history(r.history, r.initial_val_loss)
    fig = loss_curve(hist, t("train.loss_title"), t("train.step_x"), t("train.loss_y"), t("train.train_loss"),
                     t("train.val_loss"), math.log(job.model.config.vocab_size), t("train.uniform"))
    chart(fig, hist, "train.loss")
    st.caption(t("train.loss_caption", v=job.model.config.vocab_size, lnv=f"{math.log(job.model.config.vocab_size):.2f}"))
    grads = analysis.layer_grad_history(r.history)
    fig = grad_heatmap(grads, t("train.grad_title"), t("train.step_x"), t("train.block_y"), t("train.grad_unit"))
    chart(fig, grads, "train.grads")
    st.caption(t("train.grad_caption"))
    before_after_view(ctx, job)
    if job.corpus == "zh":
        learned_view(job, r.config.seq_len)
    else:
        st.caption(t("train.learned_zh_only"))


def before_after_view(ctx: Explorer, job: jobs.TrainJob) -> None:
    st.subheader(t("train.ba_title"))
    mc = job.model.config
    in_ids = ctx.input_ids[0].tolist()
    T = len(in_ids)
    if T < 2:
        st.info(t("train.ba_short"))
        return
    if max(in_ids) >= mc.vocab_size or (mc.has_position_limit and T > mc.max_position_embeddings):
        st.info(t("train.ba_mismatch", v=mc.vocab_size))
        return
    st.caption(t("train.ba_caption"))
    L, nh = mc.num_hidden_layers, mc.num_attention_heads
    c1, c2 = st.columns(2)
    layer = index_slider(t("train.layer"), 1, L, "train.layer", container=c1)
    head = index_slider(t("train.head"), 1, nh, "train.head", container=c2)
    n = min(T, HEATMAP_MAX_TOKENS)
    if n < T:
        st.caption(t("train.ba_capped", n=n, total=T))
    with st.spinner(t("train.ba_computing")):
        data = before_after(job.init, job.model, job.id, tuple(in_ids), tuple(ctx.tokens), layer - 1, head - 1, n)
    labels = ctx.tick_labels()[:n]
    cols = st.columns(2)
    for col, which in zip(cols, ("init", "trained")):
        with col:
            mat = pd.DataFrame(data[which]["attn"], index=labels, columns=labels)
            fig = attention_heatmap(mat, labels, "softmax", t(f"train.ba_attn_{which}", layer=layer, head=head),
                                    t("train.key_x"), t("train.query_y"), t("train.prob_unit"))
            if n > HALF_WIDTH_CELL_TEXT:  # half-width charts: cell numbers would overlap (hover still shows them)
                fig.update_traces(text=None, texttemplate=None)
                fig.update_xaxes(**position_axis(labels, max_ticks=12), tickangle=-90)  # labels must not run together
            chart(fig, mat.reset_index(names=t("train.query_y")), f"train.ba_attn_{which}", columns=2,
                  view={"layer": layer, "head": head})
    top = max(float(np.nanmax(data[w]["loss"]["contribution"].to_numpy())) if len(data[w]["loss"]) else 0.0
              for w in ("init", "trained"))
    cols = st.columns(2)
    for col, which in zip(cols, ("init", "trained")):
        with col:
            df = data[which]["loss"]
            st.metric(t(f"train.ba_loss_{which}"), num(data[which]["mean_loss"], ".3f") + " nats")
            fig = contribution_bar(df, t(f"train.ba_bar_{which}"), t("train.pos_x"), t("train.contrib_y"), "")
            if math.isfinite(top) and top > 0:
                fig.update_yaxes(range=[0, top * 1.1])
            chart(fig, df, f"train.ba_loss_{which}", columns=2)
    st.caption(t("train.ba_loss_caption", n=T - 1, total=T))


def learned_view(job: jobs.TrainJob, seq_len: int) -> None:
    st.subheader(t("train.learned_title"))
    probe = job.after_result  # measured by the run itself, right after its steps
    if probe is None:
        with st.spinner(t("train.learned_computing")):
            probe = poem_probe(job.model, job.init, job.id, job.model.config.vocab_size, seq_len)
    if "error" in probe:
        st.info(t("train.learned_punct") if probe["error"] == "punct" else t("train.learned_failed", error=probe["error"]))
        return
    s = probe["structure"]
    if not revealed("train.poem"):  # a lesson asks what the run learned: its numbers wait for the answer
        predict_first()
    else:
        poem_metrics(s, probe["freq"], job.model.config.vocab_size)
    slot_view(probe)


def poem_metrics(s: dict, f: dict, vocab_size: int) -> None:
    """Where the punctuation goes: p("，") and p("。") trained vs untrained, and what they say."""
    m1, m2, m3 = st.columns(3)
    m1.metric(t("train.comma_metric"), pct(s["comma_prob"]), t("train.vs_init", init=pct(s["init_comma_prob"])),
              delta_color="off", delta_arrow="off", help=t("train.comma_help"))
    m2.metric(t("train.period_metric"), pct(s["period_prob"]), t("train.vs_init", init=pct(s["init_period_prob"])),
              delta_color="off", delta_arrow="off", help=t("train.period_help"))
    m3.metric(t("train.uniform_metric"), pct(s["uniform_prob"]), help=t("train.uniform_help", v=vocab_size))
    key = "train.poem_" + punctuation_verdict(s["comma_prob"], s["period_prob"], f["comma"], f["period"],
                                              s["init_comma_prob"], s["init_period_prob"], s["uniform_prob"])
    st.markdown(t(key, comma=pct(s["comma_prob"]), period=pct(s["period_prob"]), comma0=pct(s["init_comma_prob"]),
                  period0=pct(s["init_period_prob"]), fc=pct(f["comma"]), fp=pct(f["period"]), n=s["n_lines"],
                  ctx=s["context_len"]))
    st.caption(t("train.poem_caption"))


def slot_view(probe: dict) -> None:
    """Which head looks at the same slot of the previous line: the map and its sentence."""
    slots, best = probe["slots"], probe["slot"]
    fig = slot_heatmap(slots, t("train.slot_title"), t("train.head_x"), t("train.layer_y"), t("train.prob_unit"),
                       t("train.slot_top"))
    chart(fig, slots.assign(layer=slots["layer"] + 1, head=slots["head"] + 1), "train.slots")
    if revealed("train.slots"):  # the sentence waits for a lesson's answer about the map
        st.markdown(t("train.slot_sentence" if best["stands_out"] else "train.slot_none", layer=best["layer"] + 1,
                      head=best["head"] + 1, score=pct(best["score"]), uniform=pct(best["uniform"]),
                      init=pct(best["init_best"]), pairs=probe["n_pairs"]))
    with st.expander(t("train.slot_window")):
        st.code(probe["window"], language=None)
