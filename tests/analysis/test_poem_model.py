"""The Tang-poem model shipped in the repository: its files are verified before loading, a modified file is refused,
the held-out split never overlaps the training text, and the numbers the sidebar shows are what the shipped
weights give when measured again."""

import math
import shutil

import pytest

from analysis.probes import poem_model_metrics
from engine.checkpoints import CheckpointError
from engine.checkpoints import poem
from engine.tokenizer import load_corpus


@pytest.fixture(scope="module")
def shipped():
    model, tok = poem.load_poem_model()
    return model, tok, poem.read_metrics()


def test_loads_verified_and_consistent(shipped):
    model, tok, metrics = shipped
    assert set(poem.FILE_SHA256) == {"model.safetensors", "config.json", "tokenizer.json", "metrics.json"}
    for name, digest in poem.FILE_SHA256.items():  # the digests the loader checked are the files' real ones
        assert poem.sha256_file(poem.MODEL_DIR / name) == digest
    assert (poem.MODEL_DIR / "model.safetensors").stat().st_size < 20 * 2**20
    assert model.num_parameters() == metrics["num_parameters"] == poem.POEM_MODELS[poem.NAME].num_parameters
    assert tok.vocab_size == model.config.vocab_size
    assert model.lm_head.weight is model.embed_tokens.weight
    assert tok.encode("床前明月光，") == [tok.get_vocab()[c] for c in "床前明月光，"]  # one token per character


def test_modified_or_missing_file_is_refused(tmp_path):
    intact, tampered = tmp_path / "intact", tmp_path / "tampered"
    shutil.copytree(poem.MODEL_DIR, intact)
    shutil.copytree(poem.MODEL_DIR, tampered)
    model, _ = poem.load_poem_model(folder=intact)
    data = bytearray((tampered / "model.safetensors").read_bytes())
    data[-1] ^= 1  # one bit of the last weight
    (tampered / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="model.safetensors was modified: its SHA-256 is"):
        poem.load_poem_model(folder=tampered)
    (intact / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError, match="tokenizer.json is missing"):
        poem.read_metrics(folder=intact, digests={"tokenizer.json": poem.FILE_SHA256["tokenizer.json"]})
    with pytest.raises(CheckpointError, match="unknown shipped model"):
        poem.load_poem_model("../../etc")


def test_heldout_split_is_disjoint_and_every_tenth_entry():
    entries = load_corpus("zh").strip("\n").split("\n\n")
    train, held = poem.split_poems(load_corpus("zh"))
    held_entries = held.strip("\n").split("\n\n")
    assert held_entries == entries[9::10]
    train_entries = set(train.strip("\n").split("\n\n"))
    assert train_entries == set(entries) - set(held_entries) and not train_entries & set(held_entries)
    assert held not in poem.training_text()[0]


def test_shown_numbers_are_the_shipped_weights(shipped):
    """metrics.json (what the sidebar caption shows) against a fresh measurement of the loaded weights."""
    from ui.poem_model import learned_caption

    model, tok, metrics = shipped
    again = poem_model_metrics(model, tok, poem.training_text()[1], metrics["training"]["seq_len"])
    for key, value in again.items():
        assert metrics[key] == pytest.approx(value, rel=1e-5, abs=1e-7), key
    assert learned_caption(again) == learned_caption(metrics)
    assert metrics["ln_vocab"] == pytest.approx(math.log(tok.vocab_size))
    # the model learned something: far below a uniform guess, and sure of the punctuation
    assert metrics["heldout_loss"] < metrics["ln_vocab"] - 1.5
    assert metrics["comma_prob"] > 0.5 and metrics["comma_prob"] > 100 * metrics["init_comma_prob"]
    curve = metrics["training"]["heldout_curve"]
    assert curve[0][0] == 0 and curve[-1][0] == metrics["training"]["steps"]


def test_saving_the_same_weights_gives_the_same_bytes(tmp_path):
    """The shipped files are compared by SHA-256, so a save must not depend on hash order: safetensors writes its
    metadata map in hash order, and with two metadata keys repeated saves of one model came out in both orders."""
    from engine import CausalLM, ModelConfig
    from engine.checkpoints import save_model

    model = CausalLM(ModelConfig(vocab_size=16, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=16))
    files = {poem.sha256_file(save_model(model, tmp_path / str(i)) / "model.safetensors") for i in range(12)}
    assert len(files) == 1
