"""Interventions: remove a head or patch an activation and measure what changes (the causal question a pattern
cannot answer). Four experiments: induction (every head ablated -> loss on the second copy of a repeated random
sequence), facts and names (hook_resid_pre patched at every layer x position from a clean run into a corrupted
one, then each head's hook_z in the layers that matter), and the learner's own prompt pair.

Sweeps run as shared background jobs (ui/caches/interventions.py): admitted by the server's heavy-job line, with a
progress bar and a measured ETA, cancellable, computed once per (model, prompts, experiment) for every session;
a sweep small enough (a random toy model) runs at once. Layers and heads are 1-based on this page, positions 0-based.
"""

from contextlib import ExitStack
from functools import partial

import streamlit as st

from analysis import compare
from analysis import intervention_views as views
from analysis import interventions as iv
from engine.cost import trace_cost
from server.admission import HEAVY_GFLOP
from server.budget import view_work
from ui.caches import interventions as jobs
from ui.compare import compared
from ui.compare_views import difference_panel, grid_sentences, say
from ui.controls import index_slider
from ui.figures.attention import attention_heatmap
from ui.figures.compare import PRESENTER_COMPARE_PX, same_height
from ui.figures.interventions import effect_map, together_bars, tokens_bars
from ui.format import duration, number, significant
from ui.escape import plotly
from ui.i18n import current_lang, labeler, t
from ui.teaching.gate import chart_gate
from ui.sidebar import explorer
from ui.state import control, current, register_params
from ui.tokens import phrase
from ui.presenter import presenter_mode
from ui.widgets import chart, first_screen, real_model_notice

EXPERIMENTS = ["induction", "facts", "names", "own"]
STANDS_OUT = 0.1  # nats: a largest single-head rise below this is "no single head matters much"
POLL_S = 0.5
JOB_KEY = "interv.job"  # this session's latest job (its error or cancel is said after it ended)
KEYS = {"ind": ("interv.layer", "interv.head"), "res": ("interv.rlayer", "interv.position"),
        "z": ("interv.zlayer", "interv.zhead")}


def _picker_follows(chart_key: str, keys: tuple[str, str], subject: str):
    """on_select of a map: move its two pickers to the clicked cell (the map plots layer ``l`` at y = l + 1 and
    column ``c`` at x = c)."""
    def follow() -> None:
        points = st.session_state[chart_key + ".chart"].selection.get("points", [])
        if points:
            layer, col = int(round(points[0]["y"])) - 1, int(round(points[0]["x"]))
            st.session_state[keys[0]] = layer + 1
            st.session_state[keys[1]] = col + 1 if subject != "res" else col
            st.session_state["interv.subject"] = subject
            st.session_state.pop("interv.watched", None)  # the watched head follows the new cell
    return follow


def _fmt(v: float, spec: str = ".2f") -> str:
    return number(v, spec)


def _signed(v: float) -> str:
    """A change in nats with its sign: two decimals, or two significant digits where two decimals would print a
    nonzero change as 0.00 (a fresh model's heads: +0.0035)."""
    if v != 0 and abs(v) < 0.005:
        return f"{v:+.2g}"
    s = f"{v:+.2f}"
    return "+0.00" if s == "-0.00" else s


def _group_label(group: str) -> str:
    """The label of a bar of heads removed together (:func:`analysis.intervention_views.together_table`)."""
    return t("interv.ind.group.top", k=group[3:]) if group.startswith("top") else t(f"interv.ind.group.{group}")


# ---------------------------------------------------------------------------------------------------- the sweep
@st.fragment(run_every=POLL_S)
def _progress(job: jobs.SweepJob) -> None:
    if job.finished.is_set():
        st.rerun()  # the whole page: the result (or what went wrong)
    ahead = job.ahead()
    if job.started is None:
        st.info(t("interv.waiting", ahead=ahead) if ahead else t("interv.waiting_next"))
    else:
        eta = job.eta_s()
        text = t("interv.progress", done=f"{job.done:,.0f}", total=f"{job.total:,.0f}",
                 elapsed=duration(job.elapsed_s()), eta=duration(eta)) if eta is not None else t("interv.progress_start")
        st.progress(job.fraction, text=text)
    if len(job.watchers) > 1:
        st.caption(t("interv.watchers", n=len(job.watchers)))
    st.button(t("interv.cancel"), key="interv.cancel", on_click=jobs.leave, args=(job, jobs.this_session()))


def _ready(ctx, key: tuple, work, forwards: float, ids: tuple):
    """The result of ``key`` if there is one without a background job: stored, or computed now (small); else None."""
    res = jobs.result(key)
    if res is not None:
        return res
    gflop = forwards * trace_cost(ctx.config, len(ids)).gflop
    if gflop < HEAVY_GFLOP:  # a toy model's sweep: at once, as any page view
        with view_work(gflop), st.spinner(t("interv.computing")):
            return jobs.store(key, work(None))
    return None


def _run_or_wait(ctx, screen: ExitStack, key: tuple, name: str, work, forwards: float, runs: int, ids: tuple, preview):
    """The result of ``key``: stored, computed now (small), or by a background job (a Run button, then a live
    progress panel); stops the page while there is none, after drawing ``preview()`` (what the model does
    without any intervention: the prediction to check). ``screen``: the first screen, closed before it stops."""
    res = _ready(ctx, key, work, forwards, ids)
    if res is not None:
        return res
    job = jobs.pending(key)
    if job is not None:  # someone (maybe this session) is computing it: watch the same job
        job = jobs.start(key, name, work, jobs.this_session())
    else:
        last = st.session_state.get(JOB_KEY)
        if last is not None and last.key == key and last.finished.is_set():
            if last.error:
                st.error(t("interv.error", error=last.error))
            elif last.cancelled:
                st.info(t("interv.cancelled"))
        one = jobs.one_forward_s(ctx.model, ids)
        row = st.container(horizontal=True, vertical_alignment="center")
        if row.button(t("interv.run"), key="interv.run", type="primary"):
            job = jobs.start(key, name, work, jobs.this_session())
        else:
            row.caption(t("interv.estimate", runs=f"{runs:,}", forwards=f"{forwards:,.0f}", one=duration(one),
                          eta=duration(one * forwards)))
    if job is not None:
        st.session_state[JOB_KEY] = job
        _progress(job)
    preview()
    screen.close()
    st.stop()


# ---------------------------------------------------------------------------------------------------- previews
def _induction_preview(ctx, screen: ExitStack, ids: tuple, period: int) -> None:
    """Before the sweep: what the patterns suggest (each head's induction score), the prediction to check."""
    with st.spinner(t("interv.computing")):
        scores = jobs.head_scores(ctx.model, ids, period)
    nh = ctx.config.num_attention_heads
    fig = effect_map(scores, "head", "induction", [str(h + 1) for h in range(nh)], t("interv.ind.preview_title"),
                     t("interv.head_axis"), t("interv.layer_axis"), t("interv.ind.preview_unit"), zmax=1.0)
    chart(fig, scores.assign(layer=scores["layer"] + 1, head=scores["head"] + 1), "interv.preview", fill_screen=True)
    screen.close()
    best_i, best_p = (scores.loc[scores[c].idxmax()] for c in ("induction", "prev_token"))
    st.markdown(t("interv.ind.preview", il=int(best_i["layer"]) + 1, ih=int(best_i["head"]) + 1,
                  iscore=_fmt(best_i["induction"]), pl=int(best_p["layer"]) + 1, ph=int(best_p["head"]) + 1,
                  ps=_fmt(best_p["prev_token"])))


def _pair_preview(ctx, clean_ids: tuple, corrupt_ids: tuple) -> None:
    """Before the sweep: the top next tokens of both prompts (the answers a patch moves between)."""
    clean, corrupt = jobs.last_probs(ctx.model, clean_ids), jobs.last_probs(ctx.model, corrupt_ids)
    tok = iv.top_tokens(clean, corrupt, partial(ctx.strings_after, list(clean_ids)))
    fig = tokens_bars(tok, t("interv.pair.clean"), t("interv.pair.corrupt"), t("interv.pair.preview_title"),
                      t("interv.ba.prob"))
    chart(fig, tok, "interv.preview", fill_screen=True)


# ---------------------------------------------------------------------------------------------------- before / after
def _before_after(ctx, ids: tuple, what: tuple, at_layer: int, watch: tuple[int, int], positions: list[int],
                  period: int | None, changed_from: int, answers: tuple | None = None) -> None:
    """The attention pattern of the watched head and the top next tokens, without and with the intervention
    ``what``. ``changed_from``: the first 0-based layer whose patterns the intervention can change."""
    L, nh = ctx.config.num_hidden_layers, ctx.config.num_attention_heads
    if st.session_state.get("interv.watched") != what:  # a new cell: watch its default head
        st.session_state["interv.watched"] = what
        st.session_state["interv.watch_layer"], st.session_state["interv.watch_head"] = watch[0] + 1, watch[1] + 1
    c1, c2, c3 = st.columns(3)
    wl = index_slider(t("interv.ba.watch_layer"), 1, L, "interv.watch_layer", container=c1) - 1
    wh = index_slider(t("interv.ba.watch_head"), 1, nh, "interv.watch_head", container=c2) - 1
    if len(positions) > 1:
        pos = index_slider(t("interv.ba.position"), positions[0], positions[-1], "interv.ba_position",
                           default=positions[-1], container=c3)
    else:
        pos = positions[0]
    strings = ctx.token_strings
    view = jobs.cell_view(ctx.model, ids, what, wl, pos, strings)
    change = views.head_pattern_change(view["patterns"], wh, period)
    labels = [plotly(f"{p} {s}") for p, s in enumerate(strings(list(ids)))]
    cols = st.columns(2)
    for col, when in ((cols[0], "before"), (cols[1], "after")):
        fig = attention_heatmap(change[when], labels, "softmax", t("interv.ba.pattern_title", layer=wl + 1,
                                                                   head=wh + 1, when=t(f"interv.ba.{when}")),
                                t("interv.x"), t("interv.y"), t("interv.unit_prob"))
        with col:
            chart(fig, None, f"interv.pattern_{when}", columns=2)
    if wl < changed_from:
        st.caption(t("interv.ba.same", layer=at_layer + 1))
    else:  # with the head's induction score before (b) and after (a) on a repeated sequence
        scores = {name: _fmt(v, ".3f") for name, v in zip("ba", change["scores"] or ())}
        st.caption(t("interv.ba.changed" if scores else "interv.ba.changed_plain", delta=_fmt(change["delta"], ".3f"),
                     q=change["query"], k=change["key"], **scores))

    tok = view["tokens"]
    fig = tokens_bars(tok, t("interv.ba.before"), t("interv.ba.after"),
                      t("interv.ba.tokens_title", pos=pos, token=f"“{labels[pos].split(' ', 1)[-1]}”"),
                      t("interv.ba.prob"))
    chart(fig, tok, "interv.tokens")
    first_b, first_a = tok.sort_values("before").iloc[-1], tok.sort_values("after").iloc[-1]
    st.markdown(t("interv.ba.top", before=f"“{first_b.token}”", pb=significant(first_b.before),
                  after=f"“{first_a.token}”", pa=significant(first_a.after)))
    got = dict(zip(tok["token_id"], zip(tok["before"], tok["after"])))  # token id -> (before, after)
    if answers is not None:
        cid, wid, cname, wname = answers
        if cid in got and wid in got:
            st.markdown(t("interv.ba.pair", correct=cname, wrong=wname, cb=significant(got[cid][0]),
                          ca=significant(got[cid][1]), wb=significant(got[wid][0]), wa=significant(got[wid][1])))
    elif pos + 1 < len(ids):
        nxt = ids[pos + 1]
        if nxt in got:
            st.markdown(t("interv.ba.target", token=f"“{strings([nxt])[0]}”", b=significant(got[nxt][0]),
                          a=significant(got[nxt][1])))


# ---------------------------------------------------------------------------------------------------- induction
def induction_sweep(side):
    """A side's induction experiment as the single view sets it up: ``(period, ids tuple, key, work, forwards)``."""
    period = iv.induction_period(side.config)
    ids = iv.induction_ids(side.model, side.tokenizer, period)  # (1, 2n)
    return (period, tuple(ids[0].tolist()), ("induction", side.model_key, tuple(ids[0].tolist())),
            partial(views.induction_experiment, side.model, ids, period),
            views.induction_forwards(side.model, ids.shape[1]))


def compare_induction(pair, mine: tuple, sel: tuple[int, int]) -> bool:
    """Both sides' loss rise per removed head on one colour scale, the sentence, and A − B per head (``mine``: the
    sidebar's side's result). False, with a sentence, where the other side's sweep needs a background run first."""
    results = {}
    for letter, side in pair.sides():
        if letter == pair.edited:
            results[letter] = mine
            continue
        _, ids, key, work, forwards = induction_sweep(side)
        results[letter] = _ready(side, key, work, forwards, ids)
        if results[letter] is None:
            st.info(t("compare.interv_waiting", side=letter.upper(), edited=pair.edited.upper()))
            return False
    frames = {letter: res[0] for letter, res in results.items()}
    top = max(float(f["increase"].abs().max()) for f in frames.values())  # one colour scale: equal rises look equal
    figs = {}
    for letter, side in pair.sides():
        nh = side.config.num_attention_heads
        inside = sel[0] < side.config.num_hidden_layers and sel[1] < nh
        figs[letter] = effect_map(frames[letter], "head", "increase", [str(h + 1) for h in range(nh)],
                                  t("compare.title", side=letter.upper(), title=t("compare.interv_map_title")),
                                  t("interv.head_axis"), t("interv.layer_axis"), t("interv.ind.unit"),
                                  sel if inside else None, zmax=top or None)
    same_height(list(figs.values()), PRESENTER_COMPARE_PX if presenter_mode() else None)
    keys = KEYS["ind"]
    for column, (letter, fig) in zip(st.columns(2), figs.items()):
        with column:
            frame = frames[letter]
            chart(fig, frame.assign(layer=frame["layer"] + 1, head=frame["head"] + 1), f"interv.ind_map.{letter}",
                  on_select=_picker_follows(f"interv.ind_map.{letter}", keys, "ind"), columns=2,
                  view={"side": letter.upper()})
    grids = {letter: compare.layer_grid(f, "increase") for letter, f in frames.items()}
    tops = {letter: res[1] for letter, res in results.items()}
    said = [t("compare.interv_top", la=tops["a"]["top"]["layer"] + 1, ha=tops["a"]["top"]["head"] + 1,
              ra=_signed(tops["a"]["top"]["increase"]), ba=_fmt(tops["a"]["base_loss"]),
              lb=tops["b"]["top"]["layer"] + 1, hb=tops["b"]["top"]["head"] + 1,
              rb=_signed(tops["b"]["top"]["increase"]), bb=_fmt(tops["b"]["base_loss"]))]
    said += grid_sentences(grids["a"], grids["b"], t("compare.interv_what"))
    say(pair, said, "interv.ind_map.a", skip=("layers", "heads", "tokens"))
    difference_panel(grids["a"], grids["b"], t("compare.interv_diff_title"), "interv.ind_map.diff", {},
                     t("interv.head_axis"), t("interv.layer_axis"))
    st.caption(t("compare.below", side=pair.edited.upper()))
    return True


def _induction(ctx, screen: ExitStack, pair=None) -> None:
    period, id_tuple, key, work, forwards = induction_sweep(ctx)
    L, nh = ctx.config.num_hidden_layers, ctx.config.num_attention_heads
    frame, summary, groups = _run_or_wait(ctx, screen, key, "induction", work, forwards, L * nh, id_tuple,
                                          lambda: _induction_preview(ctx, screen, id_tuple, period))
    base = summary["base_loss"]

    keys, top = KEYS["ind"], summary["top"]
    if st.session_state.get("interv.sel_key") != key:  # a new result: select its top head
        st.session_state["interv.sel_key"] = key
        st.session_state[keys[0]], st.session_state[keys[1]] = top["layer"] + 1, top["head"] + 1
        st.session_state.pop("interv.watched", None)
    sel = (min(max(int(current(keys[0], 1)), 1), L) - 1, min(max(int(current(keys[1], 1)), 1), nh) - 1)
    labels = [str(h + 1) for h in range(nh)]
    if pair is None or not compare_induction(pair, (frame, summary, groups), sel):
        fig = effect_map(frame, "head", "increase", labels, t("interv.ind.map_title"), t("interv.head_axis"),
                         t("interv.layer_axis"), t("interv.ind.unit"), sel)
        table = frame.assign(layer=frame["layer"] + 1, head=frame["head"] + 1)
        chart(fig, table, "interv.ind_map", on_select=_picker_follows("interv.ind_map", keys, "ind"), fill_screen=True)
    screen.close()
    if chart_gate("interv.ind_map")[0]:  # a lesson asks to predict it: no sentence gives it away
        return
    st.caption(t("interv.ind.setup", n=period, m=period - 1, base=_fmt(base)))

    # ---- in words, from the numbers ----
    if top["increase"] < STANDS_OUT:
        st.markdown(t("interv.ind.none", base=_fmt(base), layer=top["layer"] + 1, head=top["head"] + 1,
                      rise=_fmt(top["increase"])))
    else:
        st.markdown(t("interv.ind.top", layer=top["layer"] + 1, head=top["head"] + 1, base=_fmt(base),
                      loss=_fmt(top["loss"]), runner=_fmt(summary["runner_up_increase"])))
    p, i = summary["prev_head"], summary["induction_head"]
    if (p["layer"], p["head"]) == (i["layer"], i["head"]):
        st.markdown(t("interv.ind.same_head", layer=p["layer"] + 1, head=p["head"] + 1))
    else:
        st.markdown(t("interv.ind.circuit", pl=p["layer"] + 1, ph=p["head"] + 1, ps=_fmt(p["score"]),
                      pr=_signed(p["increase"]), il=i["layer"] + 1, ih=i["head"] + 1, iscore=_fmt(i["score"]),
                      ir=_signed(i["increase"])))
        if p["increase"] > 0 and i["increase"] > 0 and top["increase"] >= STANDS_OUT:
            hi, lo = max(p["increase"], i["increase"]), min(p["increase"], i["increase"])
            which = "interv.ind.ratio_prev" if p["increase"] >= i["increase"] else "interv.ind.ratio_ind"
            st.markdown(t(which, ratio=f"{hi / lo:.1f}"))

    # ---- heads removed together ----
    together = views.together_table(base, groups, _group_label)
    pair_loss = next(loss for g, _, loss in groups if g == "pair")
    fig = together_bars(together, base, t("interv.ind.together_title"), t("interv.ind.together_x"),
                        t("interv.ind.together_y"))
    chart(fig, together, "interv.together")
    if chart_gate("interv.together")[0]:
        groups = []  # the sentences below would give a lesson's open question away
    elif (p["layer"], p["head"]) != (i["layer"], i["head"]):
        st.markdown(t("interv.ind.pair", base=_fmt(base), pair=_fmt(pair_loss), pr=_signed(p["increase"]),
                      ir=_signed(i["increase"]), both=_signed(pair_loss - base)))
    for g, heads, loss in groups:
        if g.startswith("top"):
            st.markdown(t("interv.ind.topk", k=len(heads), heads=views.heads_text(heads), loss=_fmt(loss)))

    # ---- the clicked cell ----
    c1, c2 = st.columns(2)
    layer = index_slider(t("interv.layer_axis"), 1, L, keys[0], container=c1)
    head = index_slider(t("interv.head_axis"), 1, nh, keys[1], container=c2)
    st.subheader(t("interv.ba.ablation", layer=layer, head=head))
    watch = (i["layer"], i["head"]) if i["layer"] > layer - 1 else (layer - 1, head - 1)
    _before_after(ctx, id_tuple, ("ablate", layer - 1, head - 1), layer - 1, watch,
                  list(range(period, 2 * period - 1)), period, changed_from=layer)


# ---------------------------------------------------------------------------------------------------- prompt pairs
def _own_pair() -> iv.PromptPair:
    """The learner's pair: four text boxes (clean | corrupted, then their answers), the facts pair by default."""
    cols = st.columns(2)
    return iv.PromptPair(*(control(cols[i % 2].text_input, t(f"interv.own.{f}"), f"interv.own.{f}",
                                   getattr(iv.FACTS, f), kind="text")
                           for i, f in enumerate(("clean", "corrupt", "correct", "wrong"))))


def _check_text(check: iv.PairCheck, prompts: iv.PromptPair) -> str:
    """Why a prompt pair cannot be patched (``check.error``), in words."""
    return t(f"interv.check.{check.error}", a=check.clean_length, b=check.corrupt_length,
             correct=phrase(prompts.correct), wrong=phrase(prompts.wrong), ca=check.correct_length,
             wa=check.wrong_length)


def pair_sweep(side, check: iv.PairCheck):
    """A side's patching experiment on a checked pair as the single view sets it up: ``(clean ids, corrupted ids,
    key, work, forwards)``."""
    clean_ids, corrupt_ids = tuple(check.clean_ids[0].tolist()), tuple(check.corrupt_ids[0].tolist())
    key = ("pair", side.model_key, clean_ids, corrupt_ids, check.correct_id, check.wrong_id)
    return (clean_ids, corrupt_ids, key, partial(views.pair_experiment, side.model, check),
            sum(views.pair_forwards(side.model, len(clean_ids))))


def pair_labels(side, clean_ids: tuple, corrupt_ids: tuple) -> list[str]:
    """The residual map's column labels: each position and its corrupted token (-> the clean one where they differ)."""
    tokens, clean_tokens = side.token_strings(list(corrupt_ids)), side.token_strings(list(clean_ids))
    return [plotly(f"{p} {a}" if a == b else f"{p} {b}→{a}") for p, (a, b) in enumerate(zip(clean_tokens, tokens))]


def compare_patching(sides, prompts: iv.PromptPair, mine: tuple, sel: tuple[int, int]) -> bool:
    """Both sides' residual patching map of ``prompts`` (``mine``: the sidebar's side's ``(frame, summary, column
    labels)``), the sentence, and A − B per layer and position where the shapes match. False, with a sentence,
    where the other side cannot run the pair or needs a background run first."""
    results = {}
    for letter, side in sides.sides():
        if letter == sides.edited:
            results[letter] = mine
            continue
        check = None if side.tokenizer is None else iv.check_pair(side.tokenizer, prompts)
        why = t("interv.no_tokenizer") if check is None else _check_text(check, prompts) if check.error else None
        if why:
            st.info(t("compare.side_note", side=letter.upper(), note=why))
            return False
        clean_ids, corrupt_ids, key, work, forwards = pair_sweep(side, check)
        got = _ready(side, key, work, forwards, corrupt_ids)
        if got is None:
            st.info(t("compare.interv_waiting", side=letter.upper(), edited=sides.edited.upper()))
            return False
        results[letter] = (got[0], got[1], pair_labels(side, clean_ids, corrupt_ids))
    figs = {}
    for letter, side in sides.sides():
        frame, _, labels = results[letter]
        inside = sel[0] < side.config.num_hidden_layers and sel[1] < len(labels)
        figs[letter] = effect_map(frame, "position", "restored", labels,
                                  t("compare.title", side=letter.upper(), title=t("compare.interv_res_title")),
                                  t("interv.res.x"), t("interv.layer_axis"), t("interv.res.unit"),
                                  sel if inside else None, zmax=1.0)
    same_height(list(figs.values()), PRESENTER_COMPARE_PX if presenter_mode() else None)
    for column, (letter, fig) in zip(st.columns(2), figs.items()):
        with column:
            frame = results[letter][0]
            chart(fig, frame.assign(layer=frame["layer"] + 1), f"interv.res_map.{letter}",
                  on_select=_picker_follows(f"interv.res_map.{letter}", KEYS["res"], "res"), columns=2,
                  view={"side": letter.upper()})
    bests = {letter: res[1]["best"] for letter, res in results.items()}
    said = [t("compare.interv_res_none", side=letter.upper()) for letter, best in bests.items() if best is None]
    if not said:
        said.append(t("compare.interv_res_best", la=bests["a"]["layer"] + 1, pa=bests["a"]["position"],
                      va=_fmt(bests["a"]["restored"]), lb=bests["b"]["layer"] + 1, pb=bests["b"]["position"],
                      vb=_fmt(bests["b"]["restored"])))
    grids = {letter: compare.layer_grid(res[0], "restored", "position") for letter, res in results.items()}
    said += grid_sentences(grids["a"], grids["b"], t("compare.interv_res_what"), across="position")
    say(sides, said, "interv.res_map.a", skip=("layers", "heads", "tokens"))
    labels = results["a"][2] if results["a"][2] == results["b"][2] else None  # other tokens: positions only
    difference_panel(grids["a"], grids["b"], t("compare.interv_res_diff_title"), "interv.res_map.diff", {},
                     t("interv.res.x"), t("interv.layer_axis"),
                     labels or [str(p) for p in range(grids["a"].shape[1])])
    st.caption(t("compare.below", side=sides.edited.upper()))
    return True


def _pair(ctx, screen: ExitStack, experiment: str, sides=None) -> None:
    if ctx.tokenizer is None:
        st.info(t("interv.no_tokenizer"))
        return
    pair = _own_pair() if experiment == "own" else iv.BUILT_IN_PAIRS[experiment]
    check = iv.check_pair(ctx.tokenizer, pair)
    if experiment == "own":
        st.caption(t("interv.own.tokens", clean_n=check.clean_length, corrupt_n=check.corrupt_length))
    if check.error is not None:
        st.warning(_check_text(check, pair))
        return
    clean_ids, corrupt_ids, key, work, forwards = pair_sweep(ctx, check)
    L, nh, T = ctx.config.num_hidden_layers, ctx.config.num_attention_heads, len(clean_ids)
    res_frame, res, layers, z_frame, zs = _run_or_wait(ctx, screen, key, "patching", work, forwards,
                                                       L * T + min(iv.MATTER_LAYERS, L) * nh, corrupt_ids,
                                                       lambda: _pair_preview(ctx, clean_ids, corrupt_ids))
    correct, wrong, zb = phrase(pair.correct), phrase(pair.wrong), zs["best"]
    tokens, clean_tokens = ctx.token_strings(list(corrupt_ids)), ctx.token_strings(list(clean_ids))
    col_labels = pair_labels(ctx, clean_ids, corrupt_ids)
    rk, zk = KEYS["res"], KEYS["z"]
    if st.session_state.get("interv.sel_key") != key:  # a new result: select its best cells
        st.session_state["interv.sel_key"] = key
        best = res["best"] or {"layer": 0, "position": T - 1}
        st.session_state[rk[0]], st.session_state[rk[1]] = best["layer"] + 1, best["position"]
        zbest = zb or {"layer": layers[0], "head": 0}
        st.session_state[zk[0]], st.session_state[zk[1]] = zbest["layer"] + 1, zbest["head"] + 1
        st.session_state["interv.subject"] = "res"
    sel = (min(max(int(current(rk[0], 1)), 1), L) - 1, min(max(int(current(rk[1], 0)), 0), T - 1))
    if sides is None or not compare_patching(sides, pair, (res_frame, res, col_labels), sel):
        fig = effect_map(res_frame, "position", "restored", col_labels, t("interv.res.map_title"), t("interv.res.x"),
                         t("interv.layer_axis"), t("interv.res.unit"), sel, zmax=1.0)
        table = res_frame.assign(layer=res_frame["layer"] + 1, token=[tokens[p] for p in res_frame["position"]])
        chart(fig, table, "interv.res_map", on_select=_picker_follows("interv.res_map", rk, "res"), fill_screen=True)
    screen.close()
    if chart_gate("interv.res_map")[0]:  # a lesson asks to predict it: no sentence gives it away
        return
    st.caption(t("interv.pair.setup", clean=pair.clean, corrupt=pair.corrupt, correct=correct, wrong=wrong,
                 clean_diff=_fmt(res["clean_diff"]), corrupt_diff=_fmt(res["corrupted_diff"])))
    if not res_frame["restored"].notna().any():
        st.warning(t("interv.pair.no_gap", diff=_fmt(res["clean_diff"])))
    elif res["clean_diff"] <= 0 or res["clean_diff"] - res["corrupted_diff"] <= 0:
        st.warning(t("interv.pair.not_preferred", correct=correct, wrong=wrong, diff=_fmt(res["clean_diff"])))

    # ---- in words ----
    if res["best"] is not None:
        b, changed = res["best"], res["changed_positions"]
        carried = res["carried_until"] is not None and bool(changed)
        if carried:
            pos = changed[0]
            key_s = "interv.res.carried" if res["last_from"] is not None else "interv.res.carried_only"
            st.markdown(t(key_s, token=f"“{clean_tokens[pos]}”", pos=pos, until=res["carried_until"] + 1,
                          last=f"“{tokens[-1]}”", start=(res["last_from"] or 0) + 1))
        st.markdown(t("interv.res.best" if carried else "interv.res.none", best=_fmt(b["restored"]),
                      layer=b["layer"] + 1, pos=b["position"], token=f"“{tokens[b['position']]}”"))

    # ---- per head, in the layers that matter ----
    shown = ("、" if current_lang() == "zh" else ", ").join(str(l + 1) for l in layers)
    zsel = (min(max(int(current(zk[0], 1)), 1), L) - 1, min(max(int(current(zk[1], 1)), 1), nh) - 1)
    fig = effect_map(z_frame, "head", "restored", [str(h + 1) for h in range(nh)], t("interv.heads.title", layers=shown),
                     t("interv.heads.x"), t("interv.layer_axis"), t("interv.res.unit"), zsel, zmax=1.0)
    chart(fig, z_frame.assign(layer=z_frame["layer"] + 1, head=z_frame["head"] + 1), "interv.z_map",
          on_select=_picker_follows("interv.z_map", zk, "z"))
    if zb is not None and zb["restored"] > 0:
        st.markdown(t("interv.heads.sentence", layers=shown, layer=zb["layer"] + 1, head=zb["head"] + 1,
                      best=_fmt(zb["restored"]), runner=_fmt(zs["runner_up_restored"])))
    elif zb is not None:
        st.markdown(t("interv.heads.none", layers=shown, best=_fmt(zb["restored"])))

    # ---- the clicked cell ----
    on_head = st.session_state.get("interv.subject", "res") == "z"
    c1, c2 = st.columns(2)
    layer = index_slider(t("interv.layer_axis"), 1, L, (zk if on_head else rk)[0], container=c1)
    if on_head:
        head = index_slider(t("interv.head_axis"), 1, nh, zk[1], container=c2)
        st.subheader(t("interv.ba.head_patch", layer=layer, head=head))
        what = ("z", layer - 1, head - 1, clean_ids)
        watch = (layer - 1, head - 1)
        first = layer
    else:
        pos = index_slider(t("interv.res.x"), 0, T - 1, rk[1], container=c2)
        st.subheader(t("interv.ba.patch", layer=layer, pos=pos, token=f"“{tokens[pos]}”"))
        what = ("resid", layer - 1, pos, clean_ids)
        watch = (zb["layer"], zb["head"]) if zb is not None and zb["layer"] >= layer - 1 else (layer - 1, 0)
        first = layer - 1  # a patched residual stream changes the patterns of its own layer already
    _before_after(ctx, corrupt_ids, what, layer - 1, watch, [T - 1], None, changed_from=first,
                  answers=(check.correct_id, check.wrong_id, correct, wrong))


# ---------------------------------------------------------------------------------------------------- the page
register_params("interv.experiment", *(k for pair in KEYS.values() for k in pair), "interv.watch_layer",
                "interv.watch_head", "interv.ba_position", "interv.own.clean", "interv.own.corrupt", "interv.own.correct",
                "interv.own.wrong")
ctx = explorer()
pair = compared(ctx)
screen = ExitStack()  # the first screen (title, controls, main chart); closed after the main chart is drawn
screen.enter_context(first_screen(t("interv.title"), t("interv.explain")))
if ctx.source == "random":
    st.warning(t("interv.random_short" if presenter_mode() else "interv.random"))
else:
    real_model_notice(ctx.source)
experiment = control(st.segmented_control, t("interv.experiment"), "interv.experiment", "induction", kind="choice",
                     options=EXPERIMENTS, format_func=labeler("interv.experiment."), required=True) or "induction"
if experiment == "induction":
    _induction(ctx, screen, pair)
else:
    if pair is not None:
        st.caption(t("compare.interv_pairs_one_side", side=pair.edited.upper()))
    _pair(ctx, screen, experiment, pair)
screen.close()  # a message instead of a chart (a pair that cannot be patched)
