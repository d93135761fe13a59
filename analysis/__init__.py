"""analysis: model outputs (torch) -> tidy pandas DataFrames, the single source of every number the app shows.

The engine stays torch-only; nothing here imports streamlit or plotly, and nothing here changes a model (models
are shared between browser sessions: ``torch.no_grad``, ``torch.autograd.grad`` that never writes ``.grad``,
no hooks).

Modules, one per concern (the page that shows it in brackets):

* ``trace``: the shared forward with everything recorded, the residual stream, what is finite and trustworthy.
* ``anatomy`` (Overview): parameters per component, tying savings, one block step by step with shapes.
* ``norms`` (Layer norms), ``attention`` (Attention), ``loss`` (Loss & masking), ``next_token`` (Next token).
* ``prepost`` (Pre vs Post): the twin model with the other norm placement, divergence, gradient norms by depth;
  ``depth``: the one rule that puts a per-block profile into words, and power-law fits.
* ``training`` (Training lab): a run's loss and gradient logs as frames; ``probes``: what a model trained on the
  Tang poems learned (where the punctuation goes, which heads look at the same slot of the previous line).
* ``generation`` (Generate), and for the views that need a real model: ``heads`` (head roles), ``lens`` (logit
  lens), ``massive`` (massive activations and attention sinks), ``tokenizers`` (tokens as bytes, comparison).

The functions of the first group are re-exported here (``import analysis; analysis.loss_table(...)``).
Column vocabulary: ``layer`` (int, 0-based block index, or -1/L for embedding/final rows where noted),
``position`` (int, 0-based token index), ``head`` (int, 0-based), ``token`` (display string).
"""

from analysis.anatomy import parameter_table, shape_walkthrough, tying_savings
from analysis.attention import (ATTENTION_STAGES, attention_checks, attention_long, attention_sink, attention_stage,
                                head_entropy, masked_cells)
from analysis.depth import (FLAT_RATIO, TREND_RHO, depth_profile, inverse_sqrt_reference, power_law_fit, rank_correlation,
                            trend_kind)
from analysis.loss import logits_to_keep_check, loss_table
from analysis.next_token import generate, next_token_table, token_probability
from analysis.norms import residual_norms, sublayer_norms
from analysis.prepost import gradient_norms, last_block_gradient_by_depth, norm_placement_pair, placement_divergence
from analysis.trace import activation_frame, finite_report, norm_overflow_limit, residual_stream, run_trace, vector_norm
from analysis.training import layer_grad_history, layer_grad_profile, slot_attention_table, training_history

__all__ = [
    "ATTENTION_STAGES", "FLAT_RATIO", "TREND_RHO", "rank_correlation",
    "activation_frame", "attention_checks", "attention_long", "attention_sink", "attention_stage", "masked_cells", "depth_profile", "finite_report",
    "generate", "gradient_norms", "head_entropy", "inverse_sqrt_reference", "last_block_gradient_by_depth",
    "layer_grad_history", "layer_grad_profile", "logits_to_keep_check", "loss_table", "next_token_table",
    "norm_overflow_limit", "norm_placement_pair", "parameter_table", "placement_divergence", "power_law_fit",
    "residual_norms", "residual_stream", "run_trace", "shape_walkthrough", "slot_attention_table", "sublayer_norms",
    "token_probability", "training_history", "trend_kind", "tying_savings", "vector_norm",
]
