"""Training lab: train a copy of the sidebar model on the bundled corpus, live; compare it before and after;
probe what it learned on the Tang poems; and race Pre-Norm against Post-Norm from the same weights.

Training runs in a background thread held in this browser session's ``st.session_state`` (``ui.jobs``); a
``st.fragment(run_every=1.0)`` redraws the live panel while it runs. When a run ends, the trained model is
handed to the sidebar (``st.session_state["train.trained"]``) and the model source switches to "trained in
this session", so every page shows it. The trained model belongs to this session only.

References: Loshchilov & Hutter 2019 (AdamW), Xiong et al. 2020 (Pre-Norm vs Post-Norm gradients by depth);
see ``engine/train.py``.
"""

import math
import time

import numpy as np
import pandas as pd
import streamlit as st
import torch

import analysis
from engine import CausalLM
from engine.tokenizer import load_corpus
from engine.train import TrainConfig, head_slot_attention, lr_at, measure_poem_structure, poem_slot_pairs
from ui import jobs
from ui.admission import admission, session_liveness
from ui.budget import flops, refusal, verdict
from ui.controls import PAGE, clamp_state, index_slider, init_state
from ui.figures.attention import attention_heatmap
from ui.figures.common import HEATMAP_MAX_TOKENS, position_axis
from ui.figures.loss import contribution_bar
from ui.figures.train import grad_heatmap, grad_profile, loss_curve, race_grad_heatmaps, race_loss, slot_heatmap
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.profile import profile_sentence
from ui.sidebar import MAX_LAYERS, MAX_TOKENS, TRAINED_KEY, explorer, tokenizer_for
from ui.widgets import chart, explain, show_figure

JOB_KEY = "train.job"  # the session's latest training job (ui.jobs.TrainJob)
RACE_KEY = "train.race_job"  # the session's latest race (ui.jobs.RaceJob)
CORPORA = ("zh", "en", "all")
LR_OPTIONS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2]
BATCH_OPTIONS = [1, 2, 4, 8, 16, 32, 64]
SEQ_OPTIONS = [8, 16, 32, 64, 128, 256]
MIN_STEPS, MAX_STEPS = 10, 5000
DEFAULT = TrainConfig()  # defaults of the controls (steps 300, lr 3e-3, warmup 30, batch 16, seq 64)
RACE_STEPS = 100  # ~12 s of CPU time per race at depth 12 with the default sidebar model (measured, see report)
RACE_DEPTH = 12
RACE_BATCH, RACE_SEQ = 8, 32  # as in bench/race_pre_post.py
LIVE_EVERY_S = 1.0
HALF_WIDTH_CELL_TEXT = 12  # per-cell numbers on the side-by-side heatmaps only up to this many tokens


# ---- caches ------------------------------------------------------------------------------------------------
@st.cache_data(max_entries=12, show_spinner=False)
def corpus_ids(vocab_size: int, corpus: str) -> np.ndarray:
    """The bundled corpus ``corpus`` ("zh" / "en" / "all") encoded with the sidebar's BPE at ``vocab_size``
    (``tokenizer_for``), so the trained model reads the ids the pages show. 1-D int64."""
    return np.asarray(tokenizer_for(vocab_size).encode(load_corpus(corpus)), dtype=np.int64)


@st.cache_data(max_entries=16, show_spinner=False)
def before_after(_init: CausalLM, _trained: CausalLM, job_id: str, ids: tuple[int, ...], tokens: tuple[str, ...],
                 layer: int, head: int, n_attn: int) -> dict:
    """Attention of one head on the first ``n_attn`` tokens (``[n, n]``, NaN above the diagonal), and the
    per-position loss table and mean loss of the whole input (every token, labels = input ids: the Loss page's
    mean with nothing masked), for the "before" clone and the trained model of job ``job_id`` (keyed by the
    job id, never by weights)."""
    input_ids = torch.tensor([ids])
    out = {}
    for which, model in (("init", _init), ("trained", _trained)):
        tr = analysis.run_trace(model, input_ids, input_ids)
        out[which] = {
            "attn": analysis.attention_stage(tr, layer, head, "softmax")[:n_attn, :n_attn],
            "loss": analysis.loss_table(tr, input_ids, input_ids, list(tokens)),
            "mean_loss": float(tr.loss),
        }
    return out


@st.cache_data(max_entries=8, show_spinner=False)
def poem_probe(_trained: CausalLM, _init: CausalLM, job_id: str, vocab_size: int, context_len: int) -> dict:
    """``measure_poem_structure`` (trained vs the "before" clone) and ``head_slot_attention`` on the poem window
    of ``poem_slot_pairs``, for job ``job_id``. Also the share of "，" and "。" among all tokens of the poem
    stream (``freq``): what a model that only knows how common they are would predict everywhere. Returns
    ``{"error": message}`` when the probe cannot run (e.g. "，"/"。" are not tokens of this vocabulary)."""
    tok = tokenizer_for(vocab_size)
    comma, period = tok.encode("，"), tok.encode("。")
    unk = tok.unk_token_id
    if len(comma) != 1 or len(period) != 1 or comma == period or unk in (comma[0], period[0]):
        return {"error": "punct"}
    stream = corpus_ids(vocab_size, "zh")
    freq = {"comma": float(np.mean(stream == comma[0])), "period": float(np.mean(stream == period[0]))}
    try:
        ps = measure_poem_structure(_trained, tok, init_model=_init, context_len=context_len)
        mc = _trained.config
        window, pairs = poem_slot_pairs(tok, n_tokens=min(64, mc.max_position_embeddings) if mc.has_position_limit else 64)
        scores = head_slot_attention(_trained, window, pairs)
        init_scores = head_slot_attention(_init, window, pairs)
    except ValueError as err:
        return {"error": str(err)}
    return {
        "structure": ps.to_dict(),
        "freq": freq,
        "slots": analysis.slot_attention_table(scores),
        "init_slots": analysis.slot_attention_table(init_scores),
        "uniform_slot": float(np.mean([1.0 / (q + 1) for q, _ in pairs])),
        "n_pairs": len(pairs),
        "window": tok.decode(window),
    }


# ---- small helpers ---------------------------------------------------------------------------------------------
def num(v, spec: str = ".3f") -> str:
    """A number for the page; None/NaN/Inf become "—"."""
    return format(float(v), spec) if v is not None and math.isfinite(float(v)) else "—"


def pct(p: float) -> str:
    """A probability as a percentage with enough digits for tiny values; "—" when not finite."""
    if p is None or not math.isfinite(p):
        return "—"
    return f"{p:.1%}" if p >= 0.01 else f"{p:.3%}" if p >= 1e-5 else f"{p:.1e}"


def duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "—"
    if seconds < 10:
        return t("train.seconds", s=f"{seconds:.1f}")
    s = int(round(seconds))
    return f"{s // 60}:{s % 60:02d}" if s >= 60 else t("train.seconds", s=s)


def nearest(options: list, key: str, default) -> None:
    """Give a select_slider key a starting value and move a stale value to the nearest option (with a note)."""
    init_state(key, default if default in options else options[-1])
    value = st.session_state.get(key)
    if value not in options:
        try:
            new = min(options, key=lambda o: abs(o - value))
        except TypeError:
            new = default if default in options else options[-1]
        st.session_state[key] = new
        st.caption("⚠️ " + t("common.clamped", name=t(f"{key}.label"), old=value, new=new))


def publish_finished_job() -> None:
    """Hand a finished run's model to the sidebar, once; before ``explorer()`` so the sidebar shows it now.

    A run stopped before its first update, or one that failed, publishes nothing.
    """
    job = st.session_state.get(JOB_KEY)
    if job is None or not job.done or job.published:
        return
    job.published = True
    if job.error is None and job.result is not None and job.result.steps_done > 0:
        st.session_state[TRAINED_KEY] = {"model": job.model, "id": job.id}
        st.session_state["model.source"] = "trained"


def busy() -> bool:
    """A training run or a race of this session is running (one at a time: they share the CPU)."""
    return any(j is not None and j.running for j in (st.session_state.get(JOB_KEY), st.session_state.get(RACE_KEY)))


# Button callbacks: they run before the next script run, so the job exists (and the buttons' disabled state is
# right) as soon as the page redraws. A second click on a stale Start never starts a second job.
# A run over the server's budget (engine/cost.py) is never started, even from a stale button.
def start_training(model: CausalLM, token_ids: np.ndarray, cfg: TrainConfig, corpus: str, model_key: str) -> None:
    if not busy() and cfg is not None and train_budget(model.config, cfg).ok:
        st.session_state[JOB_KEY] = jobs.start_training(model, torch.as_tensor(token_ids), cfg, corpus, model_key,
                                                        alive=session_liveness())


def start_race(config, token_ids: np.ndarray, cfg: TrainConfig, corpus: str) -> None:
    if not busy() and race_budget(config, cfg).ok:
        st.session_state[RACE_KEY] = jobs.start_race(config, torch.as_tensor(token_ids), cfg, corpus,
                                                     alive=session_liveness())


def train_budget(config, cfg: TrainConfig):
    return verdict("train", config, steps=cfg.steps, batch=cfg.batch_size, seq_len=cfg.seq_len)


def race_budget(config, cfg: TrainConfig):
    return verdict("race", config, steps=cfg.steps, batch=cfg.batch_size, seq_len=cfg.seq_len)


def queue_note(job: jobs.BackgroundJob) -> bool:
    """While ``job`` waits for a slot of the server's heavy-job line: say how many runs are ahead; True then."""
    if not job.queued:
        return False
    line, ahead = admission(), job.ahead
    if ahead is None:  # admitted between the two reads
        return False
    key = "queue.next" if ahead == 0 else "queue.waiting_one" if ahead == 1 else "queue.waiting"
    st.info(t(key, ahead=ahead, running=line.running, limit=line.limit))
    return True


def stop_job(key: str) -> None:
    job = st.session_state.get(key)
    if job is not None:
        job.stop()


# ---- page ------------------------------------------------------------------------------------------------------
publish_finished_job()
ctx = explorer()
st.title(t("train.title"))
explain(t("train.explain"))

if ctx.source == "checkpoint":
    st.info(t("train.checkpoint"))
    n_params = ctx.model.num_parameters()
    st.caption(t("train.checkpoint_cost", params=f"{n_params / 1e6:.1f} M", weights=f"{4 * n_params / 2**30:.2f}",
                 extra=f"{12 * n_params / 2**30:.1f}", layers=ctx.config.num_hidden_layers))
    st.stop()

names = {"pre": t("cfg.norm_position.pre"), "post": t("cfg.norm_position.post")}
V = ctx.config.vocab_size
limit = min(MAX_TOKENS, ctx.config.max_position_embeddings) if ctx.config.has_position_limit else MAX_TOKENS

c1, c2 = st.columns([2, 1])
init_state("train.corpus", "zh")
if st.session_state.get("train.corpus") not in CORPORA:
    st.session_state["train.corpus"] = "zh"
corpus = c1.segmented_control(t("train.corpus.label"), CORPORA, key="train.corpus", required=True,
                              format_func=lambda c: t(f"train.corpus.{c}"), help=t("train.corpus.help"),
                              **PAGE) or "zh"
init_state("train.view", "lab")
if st.session_state.get("train.view") not in ("lab", "race"):
    st.session_state["train.view"] = "lab"
view = c2.segmented_control(t("train.view.label"), ["lab", "race"], key="train.view", required=True,
                            format_func=lambda v: t(f"train.view.{v}"), **PAGE) or "lab"

with st.spinner(t("train.encoding", corpus=t(f"train.corpus.{corpus}"), size=V)):
    ids = corpus_ids(V, corpus)
st.caption(t("train.corpus_tokens", n=f"{len(ids):,}", corpus=t(f"train.corpus.{corpus}"), size=V))


# =================================================================================================================
# Training lab
# =================================================================================================================
@st.fragment(run_every=LIVE_EVERY_S)
def live_train_panel(compact: bool = False) -> None:
    """Progress, ETA, live loss curve and per-block gradient norms of the running job (redrawn every second).

    ``compact``: the progress bar only (shown on the race view, so a run that ends there is still published).
    """
    job = st.session_state.get(JOB_KEY)
    if job is None:
        return
    if job.done:
        st.rerun()  # a full run publishes the model and shows the results
    if queue_note(job):
        return
    hist = list(job.history)
    n = len(hist)
    elapsed = time.perf_counter() - job.started
    st.progress(min(1.0, n / job.total), text=t("train.progress", step=n, total=job.total,
                                                 elapsed=duration(elapsed),
                                                 eta=duration(jobs.eta_from_history(hist, job.total))))
    if job.stop_event.is_set():
        st.caption(t("train.stopping"))
    if compact:
        return
    if not hist:
        st.caption(t("train.first_step"))
        return
    last = hist[-1]
    st.caption(t("train.live_numbers", loss=num(last.loss), lr=f"{last.lr:.2e}", gnorm=num(last.grad_norm, ".3g"),
                 tps=f"{last.tokens_per_s:,.0f}"))
    a, b = st.columns(2)
    df = analysis.training_history(hist)
    with a:
        show_figure(loss_curve(df, t("train.loss_title"), t("train.step_x"), t("train.loss_y"),
                               t("train.train_loss"), t("train.val_loss"), math.log(V), t("train.uniform")),
                    "train.live_loss")
    with b:
        show_figure(grad_heatmap(analysis.layer_grad_history(hist), t("train.grad_title"), t("train.step_x"),
                                 t("train.block_y"), t("train.grad_unit")), "train.live_grads")


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


def training_controls() -> TrainConfig | None:
    """Steps, learning rate, warmup, batch size and sequence length; returns the validated TrainConfig."""
    c1, c2, c3 = st.columns(3)
    init_state("train.steps", DEFAULT.steps)
    clamp_state("train.steps", MIN_STEPS, MAX_STEPS, t("train.steps.label"), c1)
    steps = int(c1.number_input(t("train.steps.label"), MIN_STEPS, MAX_STEPS, step=10, key="train.steps",
                                help=t("train.steps.help"), **PAGE))
    init_state("train.warmup", DEFAULT.warmup_steps)
    clamp_state("train.warmup", 0, steps - 1, t("train.warmup.label"), c1)
    warmup = int(c1.number_input(t("train.warmup.label"), 0, steps - 1, step=10, key="train.warmup",
                                 help=warmup_help(steps), **PAGE))
    with c2:
        nearest(LR_OPTIONS, "train.lr", DEFAULT.learning_rate)
    lr = float(c2.select_slider(t("train.lr.label"), LR_OPTIONS, key="train.lr", format_func=lambda v: f"{v:g}",
                                help=t("train.lr.help"), **PAGE))
    with c2:
        nearest(BATCH_OPTIONS, "train.batch", DEFAULT.batch_size)
    batch = int(c2.select_slider(t("train.batch.label"), BATCH_OPTIONS, key="train.batch",
                                 help=t("train.batch.help"), **PAGE))
    seq_opts = [s for s in SEQ_OPTIONS if s <= limit] or [limit]
    with c3:
        nearest(seq_opts, "train.seq_len", min(DEFAULT.seq_len, seq_opts[-1]))
    seq = int(c3.select_slider(t("train.seq_len.label"), seq_opts, key="train.seq_len",
                               help=t("train.seq_len.help", limit=limit), **PAGE))
    c3.caption(t("train.fixed", wd=DEFAULT.weight_decay, clip=DEFAULT.grad_clip, val=f"{DEFAULT.val_fraction:.0%}"))
    try:
        return TrainConfig(steps=steps, learning_rate=lr, warmup_steps=warmup, batch_size=batch, seq_len=seq,
                           eval_every=max(1, steps // 10), seed=DEFAULT.seed)
    except ValueError as err:
        st.warning(t("train.bad_settings", error=str(err)))
        return None


def lab_view() -> None:
    job = st.session_state.get(JOB_KEY)
    n_params = sum(p.numel() for p in ctx.model.parameters())
    what = t("train.source.trained") if ctx.source == "trained" else t("train.source.random")
    with st.expander(t("train.settings"), expanded=not presenter_mode()):  # folded on a projector: room for the charts
        st.caption(t("train.what", what=what, params=f"{n_params:,}", L=ctx.config.num_hidden_layers,
                     H=ctx.config.hidden_size, V=V, placement=names[ctx.config.norm_position]))
        cfg = training_controls()
    if cfg is not None and len(ids) * (1 - cfg.val_fraction) < cfg.seq_len * 2:
        st.warning(t("train.too_short", n=len(ids), seq=cfg.seq_len))
    cost = train_budget(ctx.config, cfg) if cfg is not None else None
    if cost is not None and not cost.ok:
        st.error(refusal(cost))
    b1, b2, _ = st.columns([1, 1, 3])
    b1.button(t("train.start"), key="train.start", type="primary", disabled=busy() or cost is None or not cost.ok,
              on_click=start_training, args=(ctx.model, ids, cfg, corpus, ctx.model_key))
    b2.button(t("train.stop"), key="train.stop", disabled=not (job is not None and job.running),
              on_click=stop_job, args=(JOB_KEY,))
    race = st.session_state.get(RACE_KEY)
    if race is not None and race.running:
        st.caption(t("train.race_running"))
        live_race_panel(compact=True)  # reruns the page when the race ends, so Start is enabled again

    if job is None:
        st.caption(t("train.not_started", work=flops(cost.cost.gflop) if cost is not None else "—"))
        return
    if job.running:
        live_train_panel()
        return
    results(job)


def results(job: jobs.TrainJob) -> None:
    """The finished (or stopped, or failed) run: summary, full curves, before/after, what it learned."""
    if job.error is not None:
        st.error(t("train.failed", error=job.error))
        return
    r = job.result
    if r is None or r.steps_done == 0:
        st.info(t("train.no_steps"))
        return
    st.subheader(t("train.results_title"))
    msg = t("train.stopped_at", done=r.steps_done, total=r.config.steps) if r.stopped else t("train.finished", total=r.config.steps)
    st.success(msg + " " + t("train.summary", v0=num(r.initial_val_loss), v1=num(r.final_val_loss),
                             secs=duration(r.elapsed_s), corpus=t(f"train.corpus.{job.corpus}")))
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
    before_after_view(job)
    if job.corpus == "zh":
        learned_view(job, r.config.seq_len)
    else:
        st.caption(t("train.learned_zh_only"))


def before_after_view(job: jobs.TrainJob) -> None:
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
            chart(fig, mat.reset_index(names=t("train.query_y")), f"train.ba_attn_{which}")
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
            chart(fig, df, f"train.ba_loss_{which}")
    st.caption(t("train.ba_loss_caption", n=T - 1, total=T))


def learned_view(job: jobs.TrainJob, seq_len: int) -> None:
    st.subheader(t("train.learned_title"))
    with st.spinner(t("train.learned_computing")):
        probe = poem_probe(job.model, job.init, job.id, job.model.config.vocab_size, seq_len)
    if "error" in probe:
        st.info(t("train.learned_punct") if probe["error"] == "punct" else t("train.learned_failed", error=probe["error"]))
        return
    s = probe["structure"]
    m1, m2, m3 = st.columns(3)
    m1.metric(t("train.comma_metric"), pct(s["comma_prob"]), t("train.vs_init", init=pct(s["init_comma_prob"])),
              delta_color="off", delta_arrow="off", help=t("train.comma_help"))
    m2.metric(t("train.period_metric"), pct(s["period_prob"]), t("train.vs_init", init=pct(s["init_period_prob"])),
              delta_color="off", delta_arrow="off", help=t("train.period_help"))
    m3.metric(t("train.uniform_metric"), pct(s["uniform_prob"]), help=t("train.uniform_help", v=job.model.config.vocab_size))
    f = probe["freq"]
    if s["comma_prob"] > 2 * f["comma"] and s["period_prob"] > 2 * f["period"]:
        key = "train.poem_learned"  # well above a frequency-only guess: it knows WHERE in the line they go
    elif min(s["comma_prob"], s["period_prob"]) > 10 * max(s["init_comma_prob"], s["init_period_prob"], s["uniform_prob"]):
        key = "train.poem_frequency"  # it learned how common they are, not yet where they go
    else:
        key = "train.poem_not_yet"
    st.markdown(t(key, comma=pct(s["comma_prob"]), period=pct(s["period_prob"]), comma0=pct(s["init_comma_prob"]),
                  period0=pct(s["init_period_prob"]), fc=pct(f["comma"]), fp=pct(f["period"]), n=s["n_lines"],
                  ctx=s["context_len"]))
    st.caption(t("train.poem_caption"))

    slots = probe["slots"]
    best = slots.loc[slots["score"].idxmax()]
    fig = slot_heatmap(slots, t("train.slot_title"), t("train.head_x"), t("train.layer_y"), t("train.prob_unit"),
                       t("train.slot_top"))
    chart(fig, slots.assign(layer=slots["layer"] + 1, head=slots["head"] + 1), "train.slots")
    init_best = float(probe["init_slots"]["score"].max())
    stands_out = float(best["score"]) > 2 * probe["uniform_slot"] and float(best["score"]) > 2 * init_best
    st.markdown(t("train.slot_sentence" if stands_out else "train.slot_none", layer=int(best["layer"]) + 1, head=int(best["head"]) + 1,
                  score=pct(float(best["score"])), uniform=pct(probe["uniform_slot"]), init=pct(init_best),
                  pairs=probe["n_pairs"]))
    with st.expander(t("train.slot_window")):
        st.code(probe["window"], language=None)


# =================================================================================================================
# Pre-Norm vs Post-Norm race
# =================================================================================================================
@st.fragment(run_every=LIVE_EVERY_S)
def live_race_panel(compact: bool = False) -> None:
    """Progress and live curves of the running race (redrawn every second); ``compact``: progress bar only."""
    job = st.session_state.get(RACE_KEY)
    if job is None:
        return
    if job.done:
        st.rerun()
    if queue_note(job):
        return
    pre, post = list(job.histories["pre"]), list(job.histories["post"])
    n = len(post)
    elapsed = time.perf_counter() - job.started
    st.progress(min(1.0, n / job.total), text=t("train.progress", step=n, total=job.total, elapsed=duration(elapsed),
                                                 eta=duration(jobs.eta_from_history(post, job.total))))
    if job.stop_event.is_set():
        st.caption(t("train.stopping"))
    if compact:
        return
    if not pre:
        st.caption(t("train.first_step"))
        return
    race_charts(pre, post, None, None, live=True)


def race_charts(pre: list, post: list, pre0: float | None, post0: float | None, live: bool) -> None:
    hist = pd.concat([analysis.training_history(pre, pre0).assign(placement="pre"),
                      analysis.training_history(post, post0).assign(placement="post")], ignore_index=True)
    grads = pd.concat([analysis.layer_grad_history(pre).assign(placement="pre"),
                       analysis.layer_grad_history(post).assign(placement="post")], ignore_index=True)
    f1 = race_loss(hist, t("train.race_loss_title"), t("train.step_x"), t("train.loss_y"), names, t("train.val_short"))
    f2 = race_grad_heatmaps(grads, t("train.race_grad_title"), t("train.step_x"), t("train.block_y"),
                            t("train.grad_unit"), names)
    if live:
        show_figure(f1, "train.race_live_loss")
        show_figure(f2, "train.race_live_grads")
    else:
        chart(f1, hist, "train.race_loss")
        chart(f2, grads, "train.race_grads")


def race_view() -> None:
    st.subheader(t("train.race_title"))
    st.markdown(t("train.race_intro", batch=RACE_BATCH, seq=min(RACE_SEQ, limit)))
    c1, c2 = st.columns(2)
    init_state("train.race_depth", RACE_DEPTH)
    clamp_state("train.race_depth", 1, MAX_LAYERS, t("train.race_depth.label"), c1)
    depth = int(c1.slider(t("train.race_depth.label"), 1, MAX_LAYERS, key="train.race_depth",
                          help=t("train.race_depth.help"), **PAGE))
    init_state("train.race_steps", RACE_STEPS)
    clamp_state("train.race_steps", MIN_STEPS, 1000, t("train.race_steps.label"), c1)
    steps = int(c1.number_input(t("train.race_steps.label"), MIN_STEPS, 1000, step=10, key="train.race_steps",
                                help=t("train.race_steps.help"), **PAGE))
    with c2:
        nearest(LR_OPTIONS, "train.race_lr", DEFAULT.learning_rate)
    lr = float(c2.select_slider(t("train.race_lr.label"), LR_OPTIONS, key="train.race_lr",
                                format_func=lambda v: f"{v:g}", **PAGE))
    init_state("train.race_warmup", True)
    warm_on = bool(c2.toggle(t("train.race_warmup.label"), key="train.race_warmup",
                             help=t("train.race_warmup.help", n=max(1, steps // 10)), **PAGE))
    cfg = TrainConfig(steps=steps, learning_rate=lr, warmup_steps=max(1, steps // 10) if warm_on else 0,
                      batch_size=RACE_BATCH, seq_len=min(RACE_SEQ, limit), eval_every=max(1, steps // 5),
                      eval_batches=4, seed=int(st.session_state.get("cfg.seed", 0)))
    race_config = ctx.config.replace(num_hidden_layers=depth)
    st.caption(t("train.race_model", depth=depth, H=race_config.hidden_size, V=V, seed=cfg.seed,
                 warm=cfg.warmup_steps))
    job = st.session_state.get(RACE_KEY)
    b1, b2, _ = st.columns([1, 1, 3])
    cost = race_budget(race_config, cfg)
    if not cost.ok:
        st.error(refusal(cost))
    b1.button(t("train.race_start"), key="train.race_start", type="primary", disabled=busy() or not cost.ok,
              on_click=start_race, args=(race_config, ids, cfg, corpus))
    b2.button(t("train.stop"), key="train.race_stop", disabled=not (job is not None and job.running),
              on_click=stop_job, args=(RACE_KEY,))
    train_job = st.session_state.get(JOB_KEY)
    if train_job is not None and train_job.running:
        st.caption(t("train.train_running"))
        live_train_panel(compact=True)  # reruns the page when the run ends, so the model is published
    st.caption(t("train.race_expect"))
    if job is None:
        return
    if job.running:
        live_race_panel()
        return
    if job.error is not None:
        st.error(t("train.failed", error=job.error))
        return
    res = job.result
    if res is None or res.post.steps_done == 0:
        st.info(t("train.no_steps"))
        return
    st.subheader(t("train.race_results", depth=job.config.num_hidden_layers, steps=res.post.steps_done,
                   warm=job.cfg.warmup_steps))
    if res.pre.stopped:
        st.caption(t("train.stopped_at", done=res.post.steps_done, total=job.cfg.steps))
    race_charts(res.pre.history, res.post.history, res.pre.initial_val_loss, res.post.initial_val_loss, live=False)
    prof = pd.concat([analysis.layer_grad_profile(res.pre.history).assign(placement="pre"),
                      analysis.layer_grad_profile(res.post.history).assign(placement="post")], ignore_index=True)
    fig = grad_profile(prof, t("train.profile_title"), t("train.block_x"), t("train.profile_y"), names)
    chart(fig, prof, "train.race_profile")
    race_verdict(res, prof, job.config.num_hidden_layers)


def race_verdict(res, prof: pd.DataFrame, L: int) -> None:
    """Numbers of this run, and a sentence that only says what this run shows."""
    st.markdown(t("train.race_losses", pre0=num(res.pre.initial_val_loss), pre1=num(res.pre.final_val_loss),
                  post0=num(res.post.initial_val_loss), post1=num(res.post.final_val_loss)))
    if L < 3:
        st.caption(t("train.race_shallow"))
        return
    g = {k: prof[prof["placement"] == k].sort_values("layer")["mean_grad_norm"].tolist() for k in ("pre", "post")}
    sentences = [profile_sentence(names[k], g[k]) for k in ("pre", "post")]  # the Pre vs Post page's rule
    if not all(sentences):
        st.warning(t("train.race_nonfinite"))
        return
    st.markdown(t("train.race_ratios") + " " + " ".join(sentences))
    kinds = {k: analysis.depth_profile(g[k])["rest_kind"] for k in g}
    if kinds["post"] == "grows" and kinds["pre"] == "shrinks":
        st.success(t("train.race_as_expected", L=L))
    else:
        st.info(t("train.race_not_this_time", L=L))


if view == "race":
    race_view()
else:
    lab_view()
