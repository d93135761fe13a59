"""Generate: prefill the input, then decode one token per click with the KV cache, and see the sampling filters.

Each step feeds one new token: its query is the only attention row computed, against every cached key (its own
included); the cache grows by one position in every layer. A badge compares the cached logits with a full
recompute and counts the FLOPs saved. A calculator sizes the KV cache of real model shapes.
"""

import streamlit as st
import torch

from analysis import compare, generation as gen
from engine.generation import FILTER_ORDER, sampling_filters
from engine.kv_cache import cached_positions, config_kv_cache_bytes
from ui.compare import compared, same_vocabulary
from ui.compare_views import say
from ui.examples import language_notice
from ui.budget import refuse_over_budget
from ui.controls import index_slider
from ui.figures.compare import cap_height
from ui.figures.generate import cache_bars, filter_bars, memory_bars, query_row_heatmap
from ui.format import percent, significant
from ui.i18n import t
from ui.teaching.gate import page_shortcut
from ui.presenter import pairs
from ui.sidebar import explorer, presenter_mode
from ui.state import control, current, linked_int, sync_url
from ui.stepper import Sampling, current_run, history_frame, new_run
from ui.widgets import chart, first_screen, revealed
from ui.escape import html_text, plotly
from ui.tokens import phrase, text

MAX_STEPS = 64
CONTEXT_LENGTHS = [128, 512, 1024, 2048, 4096, 8192, 32768, 131072]
BYTES = {"float32": 4, "bfloat16": 2, "int8": 1}


def cache_chart(growth, S: int, fill_screen: bool) -> None:
    """The KV cache's size per layer (``gen.cache_growth``): the page's main chart until the first decode step."""
    src = {"prefill": t("gen.src.prefill"), "decode": t("gen.src.decode")}
    chart(cache_bars(growth, src, t("gen.cache_title", s=S), t("gen.cache_x"), t("gen.cache_y")), growth, "gen.cache",
          fill_screen=fill_screen)


COMPARED_PX = 300  # a compared chart's height at most in presenter mode (x 1.25 there)
QUERY_ROW_PX = 320  # the attention row's height while comparing (its colour bar's ticks apart)


def step_limit(config, prompt: list[int]) -> tuple[int | None, int]:
    """The position limit of a model (None without one) and the decode steps it leaves after ``prompt``."""
    limit = config.max_position_embeddings if config.has_position_limit else None
    return limit, MAX_STEPS if limit is None else max(0, min(MAX_STEPS, limit - len(prompt)))


def side_run(side, steps: int, sampling: Sampling):
    """One side's run after ``steps`` decode steps (fewer where its position limit ends it), the shared run the
    single view of its settings shows; this session's own run (the sidebar's) stays its run."""
    prompt = side.input_ids[0].tolist()
    _, most = step_limit(side.config, prompt)
    refuse_over_budget("trace", side.config, tokens=len(prompt) + most)
    mine = st.session_state.get("gen._run")
    run = current_run(side.model, (side.model_key, tuple(prompt), sampling), prompt, min(steps, most), sampling,
                      side.strings_after, t("gen.replaying"))
    st.session_state["gen._run"] = mine
    return run


def _html(side, run) -> str:
    pieces = side.token_pieces(run.ids)
    return (f'<div style="line-height:1.7;white-space:pre-wrap">{html_text(text(pieces[:run.prefill_len]))}'
            f'<mark style="background:#fde68a">{html_text(text(pieces[run.prefill_len:]), visible_breaks=True)}</mark>'
            "</div>")


def compare_runs(pair, steps: int, sampling: Sampling) -> None:
    """A's and B's runs at the same step: each side's text and cache per layer (one x range), and the sentence:
    the caches' bytes and how many new tokens the two sides share from the start."""
    src = {"prefill": t("gen.src.prefill"), "decode": t("gen.src.decode")}
    drawn = {}
    for letter, side in pair.sides():
        run = side_run(side, steps, sampling)
        growth = gen.cache_growth(run.cache, run.prefill_len)
        growth = growth.assign(layer=growth["layer"] + 1)
        title = t("compare.title", side=letter.upper(), title=t("compare.gen_cache_title", s=len(run.ids)))
        drawn[letter] = (run, growth, cache_bars(growth, src, title, t("gen.cache_x"), t("gen.cache_y")))
    most = max(int(g.groupby("layer")["positions"].sum().max()) for _, g, _ in drawn.values())
    for _, _, fig in drawn.values():
        fig.update_xaxes(range=[0, most * 1.05], autorange=False)  # one x range: equal caches equally long
    if presenter_mode():
        cap_height([fig for _, _, fig in drawn.values()], COMPARED_PX)
    for column, (letter, side) in zip(st.columns(2), pair.sides()):
        run, growth, fig = drawn[letter]
        with column:
            st.markdown(_html(side, run), unsafe_allow_html=True)
            chart(fig, growth, f"gen.cache.{letter}", columns=2, view={"side": letter.upper(), "step": len(run.steps)})
    (ra, _, _), (rb, _, _) = drawn["a"], drawn["b"]
    a, b = ra.cache.num_bytes(), rb.cache.num_bytes()
    new_a, new_b = ra.ids[ra.prefill_len:], rb.ids[rb.prefill_len:]
    if not same_vocabulary(pair):  # another vocabulary: the new tokens compared by their text
        new_a, new_b = pair.a.token_strings(ra.ids)[ra.prefill_len:], pair.b.token_strings(rb.ids)[rb.prefill_len:]
    said = [t("compare.gen_sentence", n=len(ra.steps), m=len(rb.steps), a=f"{a:,}", b=f"{b:,}",
              ratio=significant(b / a))]
    if new_a or new_b:
        said.append(t("compare.gen_shared", k=compare.shared_start(new_a, new_b), n=min(len(new_a), len(new_b))))
    say(pair, said, "gen.cache.a", skip=("heads",))  # heads do not align here


def _step(delta: int | None) -> None:
    st.session_state["gen._pressed"] = delta
    st.session_state["gen.steps"] = 0 if delta is None else min(st.session_state["gen.steps"] + delta, max_steps)


ctx = explorer()
pair = compared(ctx)
with first_screen(t("gen.title"), t("gen.explain")):
    language_notice(ctx)
    presenting = presenter_mode()
    config = ctx.config
    prompt = ctx.input_ids[0].tolist()

    # ---- sampling settings (in the URL, so a shared link replays the same run) ----
    # in presenter mode behind a button in the run's row (one line: room for the chart), one control a line
    settings = pairs("gen.settings")  # on a phone two controls a row, not six rows above the chart
    row = st.container(horizontal=True, vertical_alignment="center")
    run_buttons = row.container(horizontal=True, vertical_alignment="center", width="content")
    if presenting:
        settings = row.popover(t("gen.settings"), icon="⚙️")
    status = row.empty()
    c = [settings] * 6 if presenting else settings.columns(6)
    do_sample = control(c[0].toggle, t("gen.sample"), "gen.sample", True, kind="bool", help=t("gen.sample_help"))
    greedy = not do_sample  # the filters and the seed only shape a draw: greyed out when greedy
    sampling = Sampling(
        do_sample=bool(do_sample),
        temperature=float(control(c[1].slider, t("gen.temperature"), "gen.temperature", 0.8, kind="float", lo=0.1,
                                  hi=3.0, step=0.1, disabled=greedy)),
        top_k=int(control(c[2].slider, t("gen.top_k"), "gen.top_k", 20, kind="int", lo=0, hi=100, disabled=greedy,
                          help=t("gen.top_k_help"))),
        top_p=float(control(c[3].slider, t("gen.top_p"), "gen.top_p", 0.9, kind="float", lo=0.05, hi=1.0, step=0.05,
                            disabled=greedy, help=t("gen.top_p_help"))),
        min_p=float(control(c[4].slider, t("gen.min_p"), "gen.min_p", 0.05, kind="float", lo=0.0, hi=0.5, step=0.01,
                            disabled=greedy, help=t("gen.min_p_help"))),
        seed=int(control(c[5].number_input, t("gen.seed"), "gen.seed", 0, kind="int", lo=0, hi=2**31 - 1, min_value=0,
                         max_value=2**31 - 1, step=1, disabled=greedy)),
    )
    if greedy:
        settings.caption(t("gen.sampling_only"))

    # ---- the run: prefill once, then one step per click (PageDown) ----
    limit, max_steps = step_limit(config, prompt)
    # The step count is in the link (a link replays the run to its step); a new prompt, model or sampling setting
    # starts a new run at step 0 (step 1 when "Next token" was pressed in the same run as the change).
    steps = linked_int("gen.steps", t("gen.steps_label"), 0, 0, MAX_STEPS)
    key = (ctx.model_key, tuple(prompt), sampling)
    pressed = st.session_state.pop("gen._pressed", None)  # the button this run answers (its callback ran first)
    if new_run(key):
        st.session_state["gen.steps"] = min(1, max_steps) if pressed == 1 else 0
    else:
        st.session_state["gen.steps"] = min(max(0, int(steps)), max_steps)
    sync_url("gen.steps", st.session_state["gen.steps"], 0)

    refuse_over_budget("trace", config, tokens=len(prompt) + max_steps)  # each step recomputes the sequence once
    run = current_run(ctx.model, key, prompt, st.session_state["gen.steps"], sampling, ctx.strings_after, t("gen.replaying"))
    if not bool(torch.isfinite(run.logits).all()):
        st.warning(t("gen.nonfinite"))  # no distribution to sample from
        st.stop()
    n = len(run.steps)
    S = len(run.ids)
    growth = gen.cache_growth(run.cache, run.prefill_len)
    growth = growth.assign(layer=growth["layer"] + 1)  # layer 1 = the first, as on every page
    run_buttons.button(t("gen.next"), on_click=_step, args=(1,), key="gen.next", shortcut=page_shortcut("PageDown"),
                       type="primary", disabled=n >= max_steps)
    run_buttons.button(t("gen.restart"), on_click=_step, args=(None,), key="gen.restart", disabled=n == 0)
    status.markdown(t("gen.status", prompt=run.prefill_len, n=n, s=S))
    if n >= max_steps:
        st.caption(t("gen.limit", n=max_steps, limit=limit) if limit is not None and max_steps < MAX_STEPS
                   else t("gen.max_steps", n=max_steps))

    pieces = ctx.token_pieces(run.ids)  # the one display rule, over the whole run (a split character is named)
    prompt_text, new_text = text(pieces[:run.prefill_len]), text(pieces[run.prefill_len:])
    if pair is None:
        st.markdown(f'<div style="font-size:1.15rem;line-height:1.8;white-space:pre-wrap">{html_text(prompt_text)}'
                    f'<mark style="background:#fde68a">{html_text(new_text, visible_breaks=True)}</mark></div>',
                    unsafe_allow_html=True)
    else:
        compare_runs(pair, n, sampling)
        st.caption(t("compare.below", side=pair.edited.upper()))
    token_labels = ctx.token_strings(run.ids)
    labels = [plotly(f"{p} {s}") for p, s in enumerate(token_labels)]

    # ---- the latest step: token, badges, the one new attention row ----
    if n:
        last = run.steps[-1]
        check = last["check"]
        st.subheader(t("gen.step_title", n=n, pos=last["position"], tok=phrase(pieces[last["position"]])))
        st.markdown(t("gen.sampled", p=percent(last['probability']), raw=percent(last['raw_probability']))
                    if do_sample else t("gen.greedy_pick", p=percent(last['raw_probability'])))
        badges = st.container(horizontal=True)
        ok = check["max_abs_diff"] <= 1e-4
        badges.badge(t("gen.badge_delta", d=f"{check['max_abs_diff']:.1e}"), icon="✅" if ok else "⚠️",
                     color="green" if ok else "red")
        badges.badge(t("gen.badge_flops", cached=f"{check['flops_cached']:,}", full=f"{check['flops_full']:,}",
                       x=f"{check['saving']:.1f}"), icon="⚡", color="blue")

        L = config.num_hidden_layers
        c1, c2 = pairs("gen.row").columns(2)  # side by side on a phone too
        # layers and heads numbered from 1 on screen, as on every other page; 0-based in the tensors
        layer = index_slider(t("gen.layer"), 1, L, "gen.layer", default=1, container=c1, bind=False)
        head = index_slider(t("gen.head"), 1, config.num_attention_heads, "gen.head", default=1, container=c2, bind=False)
        qdf = gen.query_row(last["attentions"], layer - 1, token_labels, run.prefill_len)
        one = qdf[qdf["head"] == head - 1]
        fig = query_row_heatmap(one, labels, run.prefill_len, t("gen.row_title", layer=layer, head=head, s=S),
                                t("gen.row_x"), t("gen.row_y", pos=last["position"]), t("gen.weight"))
        if pair is not None:  # below the compared sides, at a height of its own (not the rest of the first screen)
            fig.update_layout(height=max(fig.layout.height or 0, QUERY_ROW_PX))
        chart(fig, one.assign(head=head), "gen.query_row", view={"step": n, "layer": layer, "head": head},
              fill_screen=pair is None)
        top = one.loc[one["weight"].idxmax()]
        st.caption(t("gen.row_caption", s=S, pos=last["position"], j=int(top["key_position"]),
                     tok=phrase(pieces[int(top["key_position"])]), w=f"{top['weight']:.3f}", total=f"{one['weight'].sum():.4f}",
                     square=f"{S * S:,}", masked=f"{S * (S - 1) // 2:,}"))
    else:
        # PageDown decodes here, but moves the lesson inside one (ui.teaching.gate.page_shortcut): said so
        st.caption(t("gen.press" if page_shortcut("PageDown") else "gen.press_lesson", n=run.prefill_len))  # a caption, not a box: the first chart stays on a projector screen
        if pair is None:  # comparing: both sides' caches are drawn above
            cache_chart(growth, S, fill_screen=True)

# ---- cache growth (before the first step: the page's main chart) ----
if n:
    cache_chart(growth, S, fill_screen=False)
kv, hd = int(growth["kv_heads"].iloc[0]), int(growth["head_dim"].iloc[0])
b, L = run.cache[0][0].element_size(), config.num_hidden_layers
kept = cached_positions(config, S)  # positions each layer's cache holds: S, or a sliding layer's window - 1
if revealed("gen.cache"):  # it reads the chart out: it waits with it while a lesson asks
    if min(kept) == S:
        st.caption(t("gen.cache_caption", L=L, kv=kv, h=config.num_attention_heads, s=S, hd=hd,
                     bytes=f"{run.cache.num_bytes():,}", b=b, formula=f"{gen.kv_cache_bytes(L, kv, hd, S, b):,}"))
    else:  # sliding-window layers keep only their window: the sum over layers, and what the window saves
        local, unwindowed = sum(k < S for k in kept), gen.kv_cache_bytes(L, kv, hd, S, b)
        windowed = config_kv_cache_bytes(config, S, b)
        st.caption(t("gen.cache_caption_window", full=L - local, local=local, kv=kv, h=config.num_attention_heads, s=S,
                     hd=hd, w=min(kept), bytes=f"{run.cache.num_bytes():,}", b=b, formula=f"{windowed:,}",
                     unwindowed=f"{unwindowed:,}", saved=percent(1 - windowed / unwindowed)))

# ---- the distribution: what each filter removed ----
n_views = n + 1
if st.session_state.get("gen._views") == n_views - 1 and current("gen.view", n_views) == n_views - 1:
    st.session_state["gen.view"] = n_views  # follow the newest step while the slider sits on it
st.session_state["gen._views"] = n_views
if current("gen.view", n_views) > n_views:  # after a restart: back to the newest distribution, silently
    st.session_state["gen.view"] = n_views
st.subheader(t("gen.dist_title"))
st.caption(t("gen.order") + " " + (t("gen.replay", seed=sampling.seed) if do_sample else t("gen.greedy_note")))
view = index_slider(t("gen.view"), 1, n_views, "gen.view", default=n_views, bind=False, help=t("gen.view_help"))
if view <= n:
    table, summary = run.steps[view - 1]["filters"], run.steps[view - 1]["summary"]
    which = t("gen.view_past", k=view, pos=run.steps[view - 1]["position"])
else:
    _, filters = sampling_filters(run.logits, sampling.temperature, sampling.top_k, sampling.top_p, sampling.min_p)
    table, summary = gen.filter_table(filters, lambda ids: ctx.strings_after(run.ids, ids), 10), gen.filter_summary(filters)
    which = t("gen.view_next", pos=S)
stages = {"softmax": t("gen.stage.softmax"), **{f: t(f"gen.stage.{f}") for f in FILTER_ORDER}}
fig = filter_bars(table, stages, t("gen.dist_chart", which=which), t("gen.dist_x"), t("gen.dist_y"))
chart(fig, table, "gen.filters")
if revealed("gen.filters"):  # it reads the chart out: it waits with it while a lesson asks
    V = config.vocab_size
    sentences = [t(f"gen.effect.{r.filter}", setting=f"{r.setting:g}", removed=f"{r.removed:,}", kept=f"{r.kept_after:,}",
                   mass=percent(r.mass_removed)) for r in summary.itertuples()]
    st.markdown(t("gen.effect_intro", v=f"{V:,}") + " " + " ".join(sentences))
if not presenting:
    st.dataframe(summary.rename(columns={c: t(f"gen.col.{c}") for c in summary.columns}), hide_index=True)

# ---- every step so far ----
if n and not presenting:
    with st.expander(t("gen.history", n=n)):
        hdf = history_frame(run, ctx.token_strings)
        st.dataframe(hdf.rename(columns={c: t(f"gen.hcol.{c}") for c in hdf.columns}), hide_index=True)

# ---- memory calculator ----
st.subheader(t("gen.mem_title"))
m1, m2 = st.columns(2)
T_mem = int(control(m1.select_slider, t("gen.mem_ctx"), "gen.ctx", 2048, kind="choice", options=list(CONTEXT_LENGTHS),
                    bind=False))
dtype = control(m2.selectbox, t("gen.mem_dtype"), "gen.dtype", "bfloat16", kind="choice", options=list(BYTES),
                bind=False)
mem = gen.memory_table(config, t("gen.mem_current"), T_mem, BYTES[dtype])
if not revealed("gen.memory.window"):  # a lesson asks what the window saves after the full cache: its rows wait
    mem = mem[mem["attention"] != "window"]
chart(memory_bars(mem, t("gen.mem_chart", T=f"{T_mem:,}", dtype=dtype), t("gen.mem_x"), t("gen.mem_y"),
                  t("gen.mcol.kv_heads"), names={"window": t("gen.mem_window")}), mem, "gen.memory")
st.latex(r"\text{bytes} = 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot T \cdot b")
if revealed("gen.memory"):  # it reads the chart out: it waits with it while a lesson asks
    llama = mem[mem["model"] == "Llama-3-8B"].set_index("attention")["mib"]
    st.caption(t("gen.mem_caption", T=f"{T_mem:,}", dtype=dtype, gqa=f"{llama['GQA']:,.0f}", mha=f"{llama['MHA']:,.0f}",
                 mqa=f"{llama['MQA']:,.0f}", x=f"{llama['MHA'] / llama['GQA']:.0f}"))
    for w in mem[mem["attention"] == "window"].itertuples():  # what a sliding window saves, per model that has one
        full = mem[(mem["model"] == w.model) & (mem["kv_heads"] == w.kv_heads) & (mem["attention"] != "window")]
        full_mib = float(full["mib"].iloc[0])
        st.caption(t("gen.mem_window_caption", model=w.model, T=f"{T_mem:,}", mib=significant(w.mib),
                     full=significant(full_mib), share=percent(w.mib / full_mib)))
if not presenting and revealed("gen.memory"):  # the table waits for a lesson's answer
    shown = mem.assign(attention=mem["attention"].replace({"window": t("gen.mem_window")}))
    st.dataframe(shown.rename(columns={c: t(f"gen.mcol.{c}") for c in mem.columns}), hide_index=True)
