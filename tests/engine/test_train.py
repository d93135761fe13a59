"""Tests of engine/train/ and analysis/probes.py: schedule, data, determinism, stop, cloning, gradient norms, race, poem probes.

Every test uses a tiny model (hidden 16-32, 1-4 layers) so each runs in well under 10 s on 2 CPU cores.
"""

from __future__ import annotations

import math
import threading

import pytest
import torch

from analysis.probes import LINE_OFFSET_5, head_slot_attention, measure_poem_structure, poem_slot_pairs
from engine import CausalLM, ModelConfig
from engine.train import StepInfo, TrainConfig, clone_model, get_batch, lr_at, race_pre_post, split_ids, train
from tests.model_helpers import checksum

V = 32


def tiny_config(**kw) -> ModelConfig:
    base = dict(vocab_size=V, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                max_position_embeddings=32)
    base.update(kw)
    return ModelConfig(**base)


def tiny_model(seed: int = 0, **kw) -> CausalLM:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return CausalLM(tiny_config(**kw))


def pattern_ids(n: int = 3000, seed: int = 0) -> list[int]:
    """A learnable stream: a repeating 8-token motif with one random token in each period."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n // 8):
        motif = [1, 2, 3, 4, 5, 6, 7]
        out += motif + [int(torch.randint(8, V, (1,), generator=g))]
    return out


def fast_cfg(**kw) -> TrainConfig:
    base = dict(steps=30, learning_rate=1e-2, warmup_steps=3, batch_size=8, seq_len=16, eval_every=10,
                eval_batches=2, seed=0, val_fraction=0.1)
    base.update(kw)
    return TrainConfig(**base)


# ---------------------------------------------------------------------------------------------------
# config and schedule
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, word",
    [
        (dict(steps=0), "steps"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(warmup_steps=10, steps=10), "warmup_steps"),
        (dict(warmup_steps=-1), "warmup_steps"),
        (dict(min_lr_ratio=1.5), "min_lr_ratio"),
        (dict(seq_len=1), "seq_len"),
        (dict(val_fraction=0.9), "val_fraction"),
        (dict(grad_clip=-1.0), "grad_clip"),
        (dict(batch_size=True), "batch_size"),
    ],
)
def test_config_validation_names_the_field(changes, word):
    with pytest.raises(ValueError, match=word):
        TrainConfig(**changes)


def test_lr_schedule_hand_computed():
    cfg = TrainConfig(steps=10, learning_rate=1.0, warmup_steps=2, min_lr_ratio=0.1)
    assert lr_at(0, cfg) == 0.0
    assert lr_at(1, cfg) == pytest.approx(0.5)  # linear warmup: 1/2 of the peak
    assert lr_at(2, cfg) == pytest.approx(1.0)  # peak at the end of warmup
    assert lr_at(6, cfg) == pytest.approx(0.55)  # half-way through the cosine: 0.1 + 0.9 * 0.5
    # r = 2/8: 0.1 + 0.9 * (1 + cos(pi/4)) / 2
    assert lr_at(4, cfg) == pytest.approx(0.1 + 0.9 * (1 + math.sqrt(0.5)) / 2)
    assert lr_at(10, cfg) == pytest.approx(0.1)  # the floor at the last step
    lrs = [lr_at(s, cfg) for s in range(2, 11)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))  # monotone decay after warmup
    with pytest.raises(ValueError, match="step"):
        lr_at(11, cfg)


def test_lr_schedule_without_warmup_starts_at_peak():
    cfg = TrainConfig(steps=4, learning_rate=2.0, warmup_steps=0, min_lr_ratio=0.0)
    assert lr_at(0, cfg) == pytest.approx(2.0)
    assert lr_at(2, cfg) == pytest.approx(1.0)  # r = 1/2
    assert lr_at(4, cfg) == pytest.approx(0.0)


# ---------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------


def test_split_is_contiguous_with_val_at_the_end():
    train_ids, val_ids = split_ids(list(range(100)), 0.1)
    assert train_ids.tolist() == list(range(90)) and val_ids.tolist() == list(range(90, 100))
    train_ids, val_ids = split_ids(list(range(10)), 0.0)
    assert len(train_ids) == 10 and len(val_ids) == 0


def test_get_batch_windows_are_consecutive_and_labels_aligned():
    ids = torch.arange(50)
    x, y = get_batch(ids, 4, 7, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 7)
    assert torch.equal(x, y)  # labels aligned with the input; the model shifts once inside
    assert torch.equal(x[:, 1:] - x[:, :-1], torch.ones(4, 6, dtype=torch.long))
    x2, _ = get_batch(ids, 4, 7, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)
    with pytest.raises(ValueError, match="shorter than seq_len"):
        get_batch(torch.arange(5), 2, 7, torch.Generator())


def test_train_rejects_too_short_text_and_bad_ids():
    with pytest.raises(ValueError, match="validation split"):
        train(tiny_model(), list(range(1, 30)) * 2, fast_cfg(seq_len=16, val_fraction=0.1))
    with pytest.raises(ValueError, match="vocab_size"):
        train(tiny_model(), [V + 5] * 200, fast_cfg())
    with pytest.raises(ValueError, match="max_position_embeddings"):
        train(tiny_model(), pattern_ids(), fast_cfg(seq_len=64))


# ---------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------


def test_tiny_run_lowers_validation_loss_and_leaves_eval_mode():
    model = tiny_model()
    infos: list[StepInfo] = []
    result = train(model, pattern_ids(), fast_cfg(steps=40), callback=infos.append)
    assert result.initial_val_loss is not None and result.final_val_loss is not None
    assert result.final_val_loss < result.initial_val_loss - 0.5, (result.initial_val_loss, result.final_val_loss)
    assert not model.training
    assert not result.stopped and result.steps_done == 40 == len(infos)
    assert [i.step for i in infos] == list(range(1, 41))
    # val loss exactly at multiples of eval_every (and the last step)
    assert [i.step for i in infos if i.val_loss is not None] == [10, 20, 30, 40]
    assert result.final_val_loss == infos[-1].val_loss
    assert all(i.tokens_per_s > 0 for i in infos)
    assert all(b.elapsed_s >= a.elapsed_s for a, b in zip(infos, infos[1:]))
    assert [i.lr for i in infos] == pytest.approx([lr_at(s, fast_cfg(steps=40)) for s in range(1, 41)])
    assert len(result.history_dicts()) == 40 and "layer_grad_norms" in result.history_dicts()[0]


def test_same_seed_gives_identical_histories():
    cfg = fast_cfg(steps=12)
    a = train(tiny_model(), pattern_ids(), cfg)
    b = train(tiny_model(), pattern_ids(), cfg)
    assert a.losses == b.losses
    assert [h.grad_norm for h in a.history] == [h.grad_norm for h in b.history]
    assert a.final_val_loss == b.final_val_loss
    c = train(tiny_model(), pattern_ids(), cfg.replace(seed=1))
    assert c.losses != a.losses  # a different seed draws different batches


def test_stop_event_set_at_step_3():
    stop = threading.Event()

    def callback(info: StepInfo) -> None:
        if info.step == 3:
            stop.set()

    model = tiny_model()
    result = train(model, pattern_ids(), fast_cfg(steps=20), callback=callback, stop=stop)
    assert result.stopped
    assert [h.step for h in result.history] == [1, 2, 3]
    assert result.final_val_loss is not None  # the final validation loss is still measured
    assert not model.training


def test_stop_callable_before_any_step():
    result = train(tiny_model(), pattern_ids(), fast_cfg(), stop=lambda: True)
    assert result.stopped and result.history == []
    assert result.final_val_loss == result.initial_val_loss


def test_training_a_clone_never_mutates_the_original():
    original = tiny_model()
    before = checksum(original)
    state = {k: v.clone() for k, v in original.state_dict().items()}
    clone = clone_model(original)
    assert clone.lm_head.weight is clone.embed_tokens.weight  # the tie survives the copy
    assert clone.embed_tokens.weight is not original.embed_tokens.weight
    train(clone, pattern_ids(), fast_cfg(steps=5))
    assert checksum(original) == before
    assert all(torch.equal(v, original.state_dict()[k]) for k, v in state.items())
    assert clone.lm_head.weight is clone.embed_tokens.weight  # still tied after training
    assert checksum(clone) != before


def test_layer_grad_norms_add_up_to_the_global_norm():
    model = tiny_model(num_hidden_layers=3)
    seen = []

    def callback(info: StepInfo) -> None:
        # grad_clip=0: the grads left on the model after the step are the unclipped ones of this step
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        ref = math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))
        outside = [p.grad for n, p in model.named_parameters() if not n.startswith("layers.") and p.grad is not None]
        ref_outside = math.sqrt(sum(float(g.double().pow(2).sum()) for g in outside))
        seen.append((info, ref, ref_outside))

    train(model, pattern_ids(), fast_cfg(steps=4, grad_clip=0.0), callback=callback)
    assert len(seen) == 4
    for info, ref, ref_outside in seen:
        assert len(info.layer_grad_norms) == 3
        assert info.grad_norm == pytest.approx(ref, rel=1e-5)
        assert info.other_grad_norm == pytest.approx(ref_outside, rel=1e-5)
        total = sum(n * n for n in info.layer_grad_norms) + ref_outside ** 2
        assert total == pytest.approx(ref ** 2, rel=1e-5)
        assert all(n > 0 for n in info.layer_grad_norms)


def test_clipping_bounds_the_update_but_reports_the_unclipped_norm():
    model = tiny_model()
    infos = []
    train(model, pattern_ids(), fast_cfg(steps=3, grad_clip=1e-3, warmup_steps=0), callback=infos.append)
    assert all(i.grad_norm > 1e-3 for i in infos)  # reported before clipping
    after = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in model.parameters() if p.grad is not None))
    assert after == pytest.approx(1e-3, rel=1e-3)  # what the optimiser saw


# ---------------------------------------------------------------------------------------------------
# Pre-Norm vs Post-Norm
# ---------------------------------------------------------------------------------------------------


def test_race_same_init_same_batches_and_interleaved_callback():
    calls = []
    cfg = fast_cfg(steps=3, warmup_steps=1)
    race = race_pre_post(tiny_config(), pattern_ids(), cfg, callback=lambda k, i: calls.append((k, i.step)))
    assert calls == [("pre", 1), ("post", 1), ("pre", 2), ("post", 2), ("pre", 3), ("post", 3)]
    assert race.pre.steps_done == race.post.steps_done == 3
    # Same initial weights: the Pre-Norm run equals a plain train() of the seeded model with Pre-Norm.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        m = CausalLM(tiny_config(norm_position="pre"))
    assert train(m, pattern_ids(), cfg).losses == race.pre.losses


def test_race_stop():
    stop = threading.Event()
    race = race_pre_post(tiny_config(), pattern_ids(), fast_cfg(steps=10),
                         callback=lambda k, i: stop.set() if i.step == 2 and k == "post" else None, stop=stop)
    assert race.pre.stopped and race.post.stopped
    assert race.pre.steps_done == race.post.steps_done == 2


def test_gradient_profile_across_depth_pre_vs_post(poem_tok):
    """The direction measured on our model (bench/race_pre_post.py: 12 layers, 100 steps, 3 seeds), here on
    6 layers, 15 steps, 3 seeds of the Tang poems.

    * Post-Norm at initialisation: the FIRST block's gradient is far larger than the others (its norm divides
      by the tiny std of the 0.02-initialised embeddings), and blocks 2..L are flat. Then, during training,
      blocks 2..L grow towards the output (Xiong et al. 2020's "larger near the output" holds for them).
    * Pre-Norm: the gradient norm DECREASES with depth (first block largest), at init and during training;
      it is not flat.
    The final-loss ordering is not tested: Pre-Norm ended lower in all 6 12-layer runs, but at this size the
    two are within noise.
    """
    from engine.tokenizer import load_corpus

    ids = poem_tok.encode(load_corpus("zh"))
    mc = ModelConfig(vocab_size=poem_tok.vocab_size, hidden_size=32, num_hidden_layers=6, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=32)
    init = {"pre": [], "post": []}
    mean = {"pre": [], "post": []}
    for seed in (0, 1, 2):
        cfg = TrainConfig(steps=15, learning_rate=3e-3, warmup_steps=0, batch_size=8, seq_len=32, eval_every=15,
                          eval_batches=1, seed=seed)
        race = race_pre_post(mc, ids, cfg)
        for name, r in race.results().items():
            init[name].append(r.history[0].layer_grad_norms)
            mean[name].append([sum(col) / len(col) for col in zip(*(h.layer_grad_norms for h in r.history))])

    def avg(rows):
        return [sum(col) / len(col) for col in zip(*rows)]

    post0, pre0, post, pre = avg(init["post"]), avg(init["pre"]), avg(mean["post"]), avg(mean["pre"])
    assert post0[0] > 5 * max(post0[1:]), post0  # Post-Norm at init: first block dominates ...
    assert max(post0[1:]) < 1.2 * min(post0[1:]), post0  # ... and the rest are flat
    assert all(a > b for a, b in zip(pre0, pre0[1:])), pre0  # Pre-Norm at init: decreasing with depth
    # Post-Norm in training: blocks 2..L grow towards the output (x1.6 after 15 steps here, x4 after 40, x40
    # after 100 steps on 12 layers)
    assert all(a < b for a, b in zip(post[1:], post[2:])) and post[-1] > 1.3 * post[1], post
    assert pre[0] > pre[-1], pre  # Pre-Norm in training: still largest at the input


# ---------------------------------------------------------------------------------------------------
# poem probes
# ---------------------------------------------------------------------------------------------------

POEM = (
    "《登鹳雀楼》\n作者：王之涣\n白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n\n"
    "《静夜思》\n作者：李白\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n"
)


@pytest.fixture(scope="module")
def poem_tok():
    from engine.tokenizer import train_bpe

    return train_bpe(128, "zh")


def test_measure_poem_structure_on_a_small_text(poem_tok):
    mc = tiny_config(vocab_size=poem_tok.vocab_size)
    model = tiny_model(vocab_size=poem_tok.vocab_size)
    text = POEM * 3
    res = measure_poem_structure(model, poem_tok, init_model=model, context_len=32, text=text)
    assert res.n_lines > 0
    assert 0 <= res.comma_prob <= 1 and 0 <= res.period_prob <= 1
    assert res.comma_prob == res.init_comma_prob  # the baseline of the same model is the same number
    assert res.uniform_prob == pytest.approx(1 / mc.vocab_size)
    # Training on the text makes "，" and "。" far more likely than at init.
    trained = clone_model(model)
    ids = poem_tok.encode(text * 4)
    train(trained, ids, fast_cfg(steps=40, seq_len=32, val_fraction=0.0, learning_rate=1e-2))
    after = measure_poem_structure(trained, poem_tok, init_model=model, context_len=32, text=text)
    assert after.comma_prob > 5 * after.init_comma_prob
    assert after.period_prob > 5 * after.init_period_prob


def test_poem_slot_pairs_point_13_tokens_back(poem_tok):
    ids, pairs = poem_slot_pairs(poem_tok, n_tokens=64, text=POEM)
    assert pairs and all(q - k == LINE_OFFSET_5 == 13 for q, k in pairs)
    # a pair maps a character to the character in the same slot of the previous line
    # (characters outside the 128-token vocabulary are [UNK]; 白, 欲, ，, 。 are in it)
    enc = {ch: poem_tok.encode(ch)[0] for ch in "白欲，。"}
    q, k = pairs[0]
    assert (ids[q], ids[k]) == (enc["欲"], enc["白"])  # line 2 slot 0 -> line 1 slot 0
    q, k = pairs[5]
    assert ids[q] == ids[k] == enc["，"]
    q, k = pairs[11]
    assert ids[q] == ids[k] == enc["。"]
    model = tiny_model(vocab_size=poem_tok.vocab_size, max_position_embeddings=64)
    scores = head_slot_attention(model, ids, pairs)
    assert [(l, h) for l, h, _ in scores] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(0.0 <= s <= 1.0 for *_, s in scores)
    # without pairs: every (p, p - offset); the batch form averages over rows
    both = head_slot_attention(model, torch.tensor([ids, ids]), offset=6)
    one = head_slot_attention(model, ids, offset=6)
    assert [s for *_, s in both] == pytest.approx([s for *_, s in one])
    with pytest.raises(ValueError, match="key"):
        head_slot_attention(model, ids, [(3, 5)])
