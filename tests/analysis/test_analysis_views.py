"""The real-model views' analysis (analysis/heads, massive, lens, tokenizers) against hand-computed values on
hand-built attention patterns and hidden states, and against properties of the model."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from analysis import heads, lens, massive
from analysis.tokenizers import compare, tokenize
from engine import CausalLM, ModelConfig
from engine.tokenizer import TextTokenizer, train_bpe


def _pattern(rows: list[list[float]]) -> torch.Tensor:
    """One layer's attention ``[1, 1, T, T]`` from a hand-written matrix."""
    return torch.tensor(rows, dtype=torch.float32)[None, None]


def _previous_token(T: int) -> torch.Tensor:
    a = torch.zeros(T, T)
    a[0, 0] = 1.0
    a[torch.arange(1, T), torch.arange(T - 1)] = 1.0  # every query on the token before it
    return a[None, None]


def _uniform(T: int) -> torch.Tensor:
    a = torch.tril(torch.ones(T, T))
    return (a / a.sum(-1, keepdim=True))[None, None]


def test_exact_previous_token_pattern_scores_one():
    att = (_previous_token(6),)
    assert heads.previous_token_scores(att)[0, 0] == pytest.approx(1.0)
    # only query 1's previous token is key 0: first-token share = 1 / (T - 1)
    assert heads.first_token_shares(att)[0, 0] == pytest.approx(1 / 5)
    assert heads.mean_entropy(att)[0, 0] == pytest.approx(0.0)


def test_uniform_pattern_scores_equal_the_uniform_reference():
    T = 7
    att = (_uniform(T),)
    ref = np.mean([1 / (t + 1) for t in range(1, T)])  # queries 1..T-1 each give 1/(t+1) to any one key
    assert heads.previous_token_scores(att)[0, 0] == pytest.approx(ref)
    assert heads.first_token_shares(att)[0, 0] == pytest.approx(ref)
    assert heads.uniform_reference(T) == pytest.approx(ref)
    assert heads.mean_entropy(att)[0, 0] == pytest.approx(np.mean([math.log(t + 1) for t in range(T)]))


def test_sink_pattern_has_first_token_share_one():
    T = 5
    a = torch.zeros(T, T)
    a[:, 0] = 1.0
    assert heads.first_token_shares((a[None, None],))[0, 0] == pytest.approx(1.0)
    assert heads.previous_token_scores((a[None, None],))[0, 0] == pytest.approx(1 / 4)  # only query 1


def test_induction_score_by_hand():
    n = 4
    T = 2 * n
    ind = torch.zeros(T, T)
    ind[torch.arange(n), 0] = 1.0  # first copy: on the first token
    for t in range(n, T):
        ind[t, t - n + 1] = 1.0  # second copy: the token after the earlier occurrence
    prev = _previous_token(T)[0, 0]
    att = (torch.stack([ind, prev])[None],)  # one layer, two heads: (1, 2, T, T)
    scores = heads.induction_scores(att, n)
    assert scores[0, 0] == pytest.approx(1.0)
    assert scores[0, 1] == pytest.approx(0.0)  # previous-token head: key t-1 != t-n+1 for n > 2
    half = 0.5 * ind + 0.5 * prev
    assert heads.induction_scores((half[None, None],), n)[0, 0] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        heads.induction_scores(att, n + 1)


def test_text_induction_by_hand():
    ids = [5, 6, 7, 5, 9]  # token 5 repeats at position 3; the token after its first occurrence is position 1
    T = len(ids)
    a = _uniform(T)[0, 0].clone()
    a[3] = torch.tensor([0.1, 0.6, 0.2, 0.1, 0.0])
    score = heads.text_induction_scores((a[None, None],), ids)
    assert score[0, 0] == pytest.approx(0.6)
    assert np.isnan(heads.text_induction_scores((a[None, None],), [1, 2, 3, 4, 5])[0, 0])


def test_repeated_random_tokens_repeat_and_avoid_excluded():
    ids = heads.repeated_random_tokens(20, 30, seed=1, exclude=range(5))
    assert ids.shape == (1, 60)
    assert torch.equal(ids[0, :30], ids[0, 30:])
    assert int(ids.min()) >= 5 and int(ids.max()) < 20


def test_head_roles_table_and_top_heads():
    T = 6
    text_att = (torch.cat([_previous_token(T), _uniform(T)], 1), torch.cat([_uniform(T), _previous_token(T)], 1))
    n = 3
    rep = (torch.cat([_uniform(2 * n), _uniform(2 * n)], 1), torch.cat([_uniform(2 * n), _uniform(2 * n)], 1))
    roles = heads.head_roles(text_att, rep, n)
    assert len(roles) == 4 and list(roles["layer"]) == [0, 0, 1, 1] and list(roles["head"]) == [0, 1, 0, 1]
    top = heads.top_heads(roles, "prev_token", 2)
    assert [(r.layer, r.head) for r in top.itertuples()] == [(0, 0), (1, 1)]


def test_massive_activation_found_where_planted():
    torch.manual_seed(0)
    hs = [torch.randn(1, 6, 16) for _ in range(4)]
    for d in (2, 3):
        hs[d][0, 0, 7] = -5000.0
    df = massive.massive_activations(hs)
    assert list(df["massive"]) == [False, False, True, True]
    row = df.iloc[2]
    assert (row["position"], row["dim"], row["max_abs"], row["value"]) == (0, 7, 5000.0, -5000.0)
    assert row["median_abs"] == pytest.approx(float(hs[2][0].abs().median()))
    assert row["ratio"] == pytest.approx(5000.0 / row["median_abs"])
    s = massive.massive_summary(df)
    assert (s["first"], s["last"], s["count"], s["places"]) == (2, 3, 2, [(0, 7, 2)])
    assert massive.massive_summary(massive.massive_activations(hs[:2])) is None


def test_sink_table_by_hand():
    shares = np.array([[0.9, 0.2, 0.6], [0.1, 0.3, 0.2]])
    df = massive.sink_table(shares)
    assert list(df["heads_over_half"]) == [2, 0]
    assert list(df["argmax_head"]) == [0, 1]
    assert df["mean"].iloc[0] == pytest.approx(1.7 / 3)


CONFIGS = [
    ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, intermediate_size=32),
    ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=32, norm_type="rmsnorm", position_embedding="rope", hidden_act="silu", mlp_gated=True,
                bias=False, tie_word_embeddings=False),
    ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                norm_position="post"),
]


def _lens_run(config: ModelConfig, seed: int, T: int):
    """A seeded model, T random ids, its forward with hidden states, and the lens table."""
    torch.manual_seed(seed)
    model = CausalLM(config)
    ids = torch.randint(0, config.vocab_size, (1, T))
    with torch.no_grad():
        out = model(ids, output_hidden_states=True, output_activations=True)
    return model, ids, out, lens.logit_lens(model, lens.residual_stream(out))


@pytest.mark.parametrize("config", CONFIGS, ids=["gpt2-like", "llama-like", "post-norm"])
def test_logit_lens_last_depth_is_the_models_output(config):
    model, ids, out, table = _lens_run(config, 0, 9)
    assert len(table) == (config.num_hidden_layers + 1) * 9
    last = table[table["depth"] == config.num_hidden_layers].sort_values("position")
    probs = out.logits[0].double().softmax(-1)
    assert np.array_equal(last["top_id"].to_numpy(), out.logits[0].argmax(-1).numpy())
    np.testing.assert_allclose(last["top_prob"], probs.max(-1).values.numpy(), rtol=1e-5)
    assert (last["rank_final"] == 0).all() and np.array_equal(last["final_id"], last["top_id"])
    np.testing.assert_allclose(lens.lens_logits(model, lens.residual_stream(out)[-1][0]), out.logits[0], rtol=1e-5,
                               atol=1e-6)
    # hidden_states ends after the final norm (transformers' convention); the lens reads the stream before it
    np.testing.assert_allclose(model.lm_head(out.hidden_states[-1][0]).detach(), out.logits[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows", [lens.LENS_ROWS, 5])  # 5: products that split depths and positions
def test_logit_lens_at_depth_d_equals_a_model_cut_after_d_blocks(rows, monkeypatch):
    """Independent reference: a model with only the first d blocks (same embedding, norm and head) outputs
    exactly what the lens reads at depth d, however the lens groups its rows into products with the head."""
    monkeypatch.setattr(lens, "LENS_ROWS", rows)
    config = CONFIGS[1]
    model, ids, out, table = _lens_run(config, 1, 7)
    d = 1
    cut = CausalLM(config.replace(num_hidden_layers=d))
    cut.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith(f"layers.{d}.")})
    with torch.no_grad():
        probs = cut(ids).logits[0].double().softmax(-1)  # (T, V)
    rows = table[table["depth"] == d].sort_values("position")
    np.testing.assert_allclose(rows["top_prob"], probs.max(-1).values.numpy(), rtol=1e-5)
    np.testing.assert_allclose(rows["p_final"], probs.gather(-1, torch.tensor(rows["final_id"].to_numpy())[:, None])[:, 0],
                               rtol=1e-4)
    first = lens.first_top_depth(table)
    assert len(first) == 7 and (first["depth"] <= config.num_hidden_layers).all()


def test_logit_lens_of_some_cells_is_those_rows_of_the_whole_table():
    """A window (the positions and depths a chart draws, a lone last position) gives the whole table's rows of those
    cells: rows do not interact (up to float rounding where the products group rows differently)."""
    model, ids, out, table = _lens_run(CONFIGS[1], 2, 9)
    for positions, depths in (([3, 4, 5, 8], None), ([8], [1, 2]), (None, [0])):
        window = lens.logit_lens(model, lens.residual_stream(out), positions=positions, depths=depths)
        expected = table[table["position"].isin(positions or range(9)) & table["depth"].isin(depths or range(3))]
        pd.testing.assert_frame_equal(window, expected.reset_index(drop=True), check_exact=False,
                                      rtol=1e-6)  # ids and ranks: exactly


@pytest.fixture(scope="module")
def byte_level() -> TextTokenizer:
    """A small GPT-2-style byte-level BPE trained offline (merges never reach whole Chinese characters)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"])
    tok.train_from_iterator(["the cat sat on the mat. " * 20, "床前明月光"], trainer)
    return TextTokenizer(tok, name="byte-level")


TEXTS = ["床前明月光，疑是地上霜。", "The cat sat.\n  Two  spaces\tand a tab", "猫 🐱 <b>&amp;</b>", ""]


@pytest.mark.parametrize("text", TEXTS)
def test_tokenize_counts_every_byte_once(byte_level, text):
    bundled = train_bpe(500)
    for tok in (bundled, byte_level):
        df = tokenize(tok, text)
        assert int(df["n_bytes"].sum()) == len(text.encode("utf-8")), tok.name
        assert len(df) == len(tok.encode(text))
    summary = compare({"bundled": tokenize(bundled, text), "byte": tokenize(byte_level, text)}, text)
    assert list(summary["bytes"]) == [len(text.encode())] * 2
    if text:
        row = summary.iloc[1]
        assert row["bytes_per_token"] == pytest.approx(len(text.encode()) / row["tokens"])


def test_byte_level_splits_chinese_into_byte_pieces(byte_level):
    df = tokenize(byte_level, "猫")  # not in the training text: three single-byte tokens
    assert list(df["piece"]) == ["‹E7›猫₁/₃", "‹8C›猫₂/₃", "‹AB›猫₃/₃"]  # 猫 = E7 8C AB, by the display rule
    assert not df["whole"].any() and list(df["n_bytes"]) == [1, 1, 1]
    bundled = tokenize(train_bpe(500), "月猫")  # character-level: 月 whole, 猫 unknown but its 3 bytes counted
    assert list(bundled["piece"])[0] == "月" and bundled["whole"].all()
    assert bundled["unknown"].iloc[-1] and bundled["n_bytes"].iloc[-1] == 3


def test_analysis_package_imports_no_ui_libraries():
    """Layering: analysis/ turns model outputs into DataFrames; it never imports streamlit or plotly."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "analysis"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in ("streamlit", "plotly", "ui", "app_pages"), f"{path.name} imports {name}"
