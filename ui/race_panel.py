"""The Training lab's second section: a Pre-Norm vs Post-Norm race from the same initial weights on the same
batches, live, then the gradient norm per block of both placements and what this run shows.

The race is a :class:`server.jobs.RaceJob` in this browser session's ``st.session_state``
(:func:`engine.train.race_pre_post`); a fragment redraws its live panel's progress every
second and its charts every few seconds, with the time left measured from the race's own steps, never a constant.

References: Xiong et al. 2020 (Pre-Norm vs Post-Norm gradients by depth); see ``engine/train/``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

import analysis
from engine.config import ModelConfig
from engine.train import TrainConfig
from server import jobs
from server.admission import session_liveness
from server.budget import verdict
from ui.budget import flops, refusal
from ui.controls import clamp_state
from ui.state import control
from ui.figures.train import grad_profile, race_grad_heatmaps, race_loss
from ui.i18n import t
from ui.profile import profile_sentence
from ui.sidebar import MAX_LAYERS, Explorer
from ui.train_common import (DEFAULT, JOB_KEY, LIVE_EVERY_S, LR_OPTIONS, MIN_STEPS, RACE_KEY, busy, link_job,
                             live_figures, lost_run_note, nearest, num, placement_names, progress, start_stop,
                             token_limit)
from ui.teaching.gate import predict_first
from ui.widgets import chart, revealed, show_figure

RACE_STEPS = 100
RACE_MAX_STEPS = 1000
RACE_DEPTH = 12
RACE_BATCH, RACE_SEQ = 8, 32  # as in bench/race_pre_post.py


def race_budget(config: ModelConfig, cfg: TrainConfig):
    return verdict("race", config, steps=cfg.steps, batch=cfg.batch_size, seq_len=cfg.seq_len)


def start_race(config: ModelConfig, token_ids: np.ndarray, cfg: TrainConfig, corpus: str) -> None:
    """Button callback (see ui.train_panel.start_training): never a second job, never one over the budget."""
    if not busy() and race_budget(config, cfg).ok:
        settings = {"depth": config.num_hidden_layers, "steps": cfg.steps, "lr": cfg.learning_rate,
                    "warmup": cfg.warmup_steps > 0}
        st.session_state[RACE_KEY] = jobs.start_race(config, torch.as_tensor(token_ids), cfg, corpus,
                                                     alive=session_liveness(), record=True, settings=settings)


RESTORE = {"depth": "train.race_depth", "steps": "train.race_steps", "lr": "train.race_lr",
           "warmup": "train.race_warmup", "corpus": "train.corpus"}



@st.fragment(run_every=LIVE_EVERY_S)
def live_race_panel() -> None:
    """Progress and ETA of the running race every second, its live curves every few (ui.train_common.live_figures)."""
    job = st.session_state.get(RACE_KEY)
    if progress(job) is None:
        return
    pre, post = list(job.histories["pre"]), list(job.histories["post"])
    if not pre:
        st.caption(t("train.first_step"))
        return
    if not revealed("train.race_loss"):  # a lesson's question about the race is still open: predict first
        predict_first()
        return
    f1, f2 = live_figures(job, lambda: race_figures(*race_frames(pre, post, None, None)))
    show_figure(f1, "train.race_live_loss")
    show_figure(f2, "train.race_live_grads")


def race_frames(pre: list, post: list, pre0: float | None, post0: float | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both runs' per-step history and per-block gradient norms, with a ``placement`` column."""
    hist = pd.concat([analysis.training_history(pre, pre0).assign(placement="pre"),
                      analysis.training_history(post, post0).assign(placement="post")], ignore_index=True)
    grads = pd.concat([analysis.layer_grad_history(pre).assign(placement="pre"),
                       analysis.layer_grad_history(post).assign(placement="post")], ignore_index=True)
    return hist, grads


def race_figures(hist: pd.DataFrame, grads: pd.DataFrame) -> tuple[go.Figure, go.Figure]:
    names = placement_names()
    return (race_loss(hist, t("race.loss_title"), t("train.step_x"), t("train.loss_y"), names, t("train.val_short")),
            race_grad_heatmaps(grads, t("race.grad_title"), t("train.step_x"), t("train.block_y"),
                               t("train.grad_unit"), names))


def race_charts(pre: list, post: list, pre0: float | None, post0: float | None) -> None:
    """The finished race's charts, with their data as CSV."""
    hist, grads = race_frames(pre, post, pre0, post0)
    f1, f2 = race_figures(hist, grads)
    chart(f1, hist, "train.race_loss")
    chart(f2, grads, "train.race_grads")


def race_view(ctx: Explorer, ids: np.ndarray, corpus: str) -> None:
    """The race: depth, steps, rate and warmup; Start / Stop; the live panel; the results and what they show."""
    limit, V = token_limit(ctx.config), ctx.config.vocab_size
    st.subheader(t("race.title"))
    st.markdown(t("race.intro", batch=RACE_BATCH, seq=min(RACE_SEQ, limit)))
    c1, c2 = st.columns(2)
    clamp_state("train.race_depth", 1, MAX_LAYERS, t("race.depth.label"), c1)
    depth = int(control(c1.slider, t("race.depth.label"), "train.race_depth", RACE_DEPTH, kind="int", lo=1,
                        hi=MAX_LAYERS, bind=False, help=t("race.depth.help")))
    clamp_state("train.race_steps", MIN_STEPS, RACE_MAX_STEPS, t("race.steps.label"), c1)
    steps = int(control(c1.number_input, t("race.steps.label"), "train.race_steps", RACE_STEPS, kind="int",
                        bind=False, min_value=MIN_STEPS, max_value=RACE_MAX_STEPS, step=10,
                        help=t("race.steps.help")))
    with c2:
        nearest(LR_OPTIONS, "train.race_lr", DEFAULT.learning_rate)
    lr = float(control(c2.select_slider, t("race.lr.label"), "train.race_lr", DEFAULT.learning_rate, kind="choice",
                       options=LR_OPTIONS, format_func=lambda v: f"{v:g}", bind=False))
    warm_on = bool(control(c2.toggle, t("race.warmup.label"), "train.race_warmup", True, kind="bool", bind=False,
                           help=t("race.warmup.help", n=max(1, steps // 10))))
    cfg = TrainConfig(steps=steps, learning_rate=lr, warmup_steps=max(1, steps // 10) if warm_on else 0,
                      batch_size=RACE_BATCH, seq_len=min(RACE_SEQ, limit), eval_every=max(1, steps // 5),
                      eval_batches=4, seed=int(st.session_state.get("cfg.seed", 0)))
    race_config = ctx.config.replace(num_hidden_layers=depth)
    st.caption(t("race.model", depth=depth, H=race_config.hidden_size, V=V, seed=cfg.seed,
                 warm=cfg.warmup_steps))
    job = st.session_state.get(RACE_KEY)
    cost = race_budget(race_config, cfg)
    if not cost.ok:
        st.error(refusal(cost))
    start_stop(RACE_KEY, t("race.start"), "train.race_start", "train.race_stop", cost.ok, start_race,
               (race_config, ids, cfg, corpus), JOB_KEY, t("train.train_running"))
    if revealed("train.race_loss") and revealed("train.race_profile"):  # it would answer a lesson's question
        st.caption(t("race.expect"))
    link_job("race", job)
    if job is None:
        if not lost_run_note("race", RESTORE):
            st.caption(t("race.not_started", work=flops(cost.cost.gflop)))
        return
    if job.running:
        live_race_panel()
        return
    if job.error is not None:
        st.error(t("train.failed", error=job.error))
        return
    if job.status == "cancelled":
        st.info(t("train.cancelled"))
        return
    res = job.result
    if res is None or res.post.steps_done == 0:
        st.info(t("train.no_steps"))
        return
    st.subheader(t("race.results", depth=job.config.num_hidden_layers, steps=res.post.steps_done,
                   warm=job.cfg.warmup_steps))
    if res.pre.stopped:
        st.caption(t("train.stopped_at", done=res.post.steps_done, total=job.cfg.steps))
    race_charts(res.pre.history, res.post.history, res.pre.initial_val_loss, res.post.initial_val_loss)
    prof = pd.concat([analysis.layer_grad_profile(res.pre.history).assign(placement="pre"),
                      analysis.layer_grad_profile(res.post.history).assign(placement="post")], ignore_index=True)
    fig = grad_profile(prof, t("race.profile_title"), t("race.block_x"), t("race.profile_y"), placement_names())
    chart(fig, prof, "train.race_profile")
    race_verdict(res, prof, job.config.num_hidden_layers)


def race_verdict(res, prof: pd.DataFrame, L: int) -> None:
    """Numbers of this run, and a sentence that only says what this run shows (each waits for a lesson's answer
    about its chart)."""
    if revealed("train.race_loss"):
        st.markdown(t("race.losses", pre0=num(res.pre.initial_val_loss), pre1=num(res.pre.final_val_loss),
                      post0=num(res.post.initial_val_loss), post1=num(res.post.final_val_loss)))
    if not revealed("train.race_profile"):
        return
    if L < 3:
        st.caption(t("race.shallow"))
        return
    g = {k: prof[prof["placement"] == k].sort_values("layer")["mean_grad_norm"].tolist() for k in ("pre", "post")}
    names = placement_names()
    sentences = [profile_sentence(names[k], g[k]) for k in ("pre", "post")]  # the Pre vs Post page's rule
    if not all(sentences):
        st.warning(t("race.nonfinite"))
        return
    st.markdown(t("race.ratios") + " " + " ".join(sentences))
    kinds = {k: analysis.depth_profile(g[k])["rest_kind"] for k in g}
    if kinds["post"] == "grows" and kinds["pre"] == "shrinks":
        st.success(t("race.as_expected", L=L))
    else:
        st.info(t("race.not_this_time", L=L))
