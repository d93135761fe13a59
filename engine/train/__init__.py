"""A small, readable training loop for :class:`engine.model.CausalLM` (torch only; no streamlit, no plotly).

What is here
------------
* ``config``: :class:`TrainConfig` (the optimisation hyper-parameters, validated at construction) and
  :func:`lr_at` (linear warmup then cosine decay of the learning rate).
* ``data``: :func:`split_ids` / :func:`get_batch`, a contiguous train/validation split of the token stream and
  random training windows.
* ``loop``: :class:`Trainer` (one optimisation step at a time) and :func:`train` (the whole loop). Every step
  reports a :class:`StepInfo` to an optional callback; a ``stop`` event ends the run between steps.
  :func:`clone_model`: the copy a caller must train instead of a shared (cached) model.
* ``race``: :func:`race_pre_post`, the same initial weights and the same batches, trained once with Pre-Norm
  and once with Post-Norm, step by step in turn.

What a model trained on the Tang poems learned (where the punctuation goes; which heads look at the same slot
of the previous line) is measured by the probes in ``analysis.probes``.

Units: losses are mean cross-entropy in nats per predicted token; learning rates are AdamW step sizes;
gradient norms are L2 norms over the named parameters; times are wall-clock seconds.

References
----------
* I. Loshchilov, F. Hutter, "Decoupled Weight Decay Regularization", ICLR 2019 (AdamW) -- the optimiser,
  used as ``torch.optim.AdamW``.
* Linear warmup + cosine decay to a floor: T. Brown et al. 2020 (GPT-3, appendix B) and A. Karpathy's nanoGPT
  (``get_lr`` in ``train.py``).
* R. Pascanu, T. Mikolov, Y. Bengio, "On the difficulty of training recurrent neural networks", ICML 2013 --
  clipping the global gradient norm, used as ``torch.nn.utils.clip_grad_norm_``.
* R. Xiong et al., "On Layer Normalization in the Transformer Architecture", ICML 2020 -- why Pre-Norm
  trains without warmup while Post-Norm's gradients depend on depth (see :func:`race_pre_post`).
"""

from .config import TrainConfig, lr_at
from .data import get_batch, split_ids
from .loop import StepInfo, StopSignal, Trainer, TrainResult, clone_model, train
from .race import RaceResult, race_pre_post

__all__ = [
    "TrainConfig",
    "StepInfo",
    "StopSignal",
    "TrainResult",
    "RaceResult",
    "Trainer",
    "lr_at",
    "split_ids",
    "get_batch",
    "train",
    "clone_model",
    "race_pre_post",
]
