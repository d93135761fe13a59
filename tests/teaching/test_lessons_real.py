"""Lesson 4's answer keys (teaching/answers/real.py) on SmolLM2-135M against transformers' own GGUF loading of the
same file, with its attentions (``output_attentions``) and forward hooks on its decoder layers as the independent
side; the KV-cache size against transformers' own cache and the hand-computed formula. Each key also changes when
the setting it depends on changes (the text, the context length, the model).

Lesson 5's keys (the Training lab's run) are in ``test_lessons_training.py``.
"""

from __future__ import annotations

import pytest
import torch

from analysis import heads
from teaching.answers.core import REGISTRY, StepInputs, options
from analysis.tokenizers import special_ids
from teaching.lessons import ROOT, compute_key, load
from settings.build import build_parts
from tests.engine.test_smollm2_parity import hf, ours  # noqa: F401  (module-scoped fixtures: the two models)

pytestmark = [pytest.mark.smollm2, pytest.mark.parity]

SENTENCE = "The capital of France is Paris. The capital of Italy is Rome. The capital of Spain is"
COUNTING = "One, two, three, four, five, six, seven,"
LESSON = ROOT / "teaching/lessons/040_smollm2_inside.toml"


def inputs(ours, text: str, **settings) -> StepInputs:  # noqa: F811
    model, tok = ours
    ids = torch.tensor([tok.encode(text)])
    return StepInputs(settings, lambda: (model.config, model, ids, tok.token_strings(ids[0].tolist()), tok))


def key(name: str, s: StepInputs, **args):
    ans = REGISTRY[name](s, **args)
    opts, i = options(ans, name)
    return ans, opts, i


def correct_text(ans) -> str:
    c = ans.correct
    return c["en"] if isinstance(c, dict) else str(c)


@pytest.fixture(scope="module")
def reference(hf, ours):  # noqa: F811
    """transformers on the lesson's sentence: attentions, and the residual stream read by hooks (the embedding
    output, then every decoder layer's output before the final norm)."""
    model, tok = hf
    ids = torch.tensor([ours[1].encode(SENTENCE)])
    assert ids.tolist() == tok(SENTENCE, return_tensors="pt").input_ids.tolist()
    resid = []
    hooks = [model.model.embed_tokens.register_forward_hook(lambda m, i, o: resid.append(o.detach()))]
    hooks += [layer.register_forward_hook(lambda m, i, o: resid.append((o[0] if isinstance(o, tuple) else o).detach()))
              for layer in model.model.layers]
    try:
        with torch.no_grad():
            out = model(ids, output_attentions=True, use_cache=True)
    finally:
        for h in hooks:
            h.remove()
    return {"ids": ids, "attentions": out.attentions, "resid": resid, "cache": out.past_key_values}


def test_total_heads(hf, ours):  # noqa: F811
    ans, opts, i = key("total_heads", inputs(ours, SENTENCE))
    cfg = hf[0].config
    assert opts[i] == cfg.num_hidden_layers * cfg.num_attention_heads == 270
    assert len(set(opts)) == len(opts) == 4


def test_first_token_share_matches_transformers(ours, reference):
    ans, opts, i = key("first_token_share", inputs(ours, SENTENCE))
    a = torch.stack([x[0] for x in reference["attentions"]]).double()  # (L, nh, T, T)
    share = float(a[:, :, 1:, 0].mean())
    assert opts[i] == round(100 * share, 1)
    assert 0.4 < share < 0.8  # a sink: far above even attention
    T = a.shape[-1]
    even = sum(1 / (t + 1) for t in range(1, T)) / (T - 1)  # uniform causal attention, by hand
    assert round(100 * even, 1) in opts and opts[i] > 3 * 100 * even
    li, hi = divmod(int(a[:, :, 1:, 0].mean(-1).argmax()), a.shape[1])
    assert ans.highlight == {"x": hi + 1, "y": li + 1}


def _prev_scores(attentions) -> torch.Tensor:
    a = torch.stack([x[0] for x in attentions]).double()  # (L, nh, T, T)
    T = a.shape[-1]
    return torch.stack([a[..., t, t - 1] for t in range(1, T)], -1).mean(-1)  # (L, nh)


def _label(layer0: int, head0: int) -> str:
    return f"layer {layer0 + 1}, head {head0 + 1}"


def test_previous_token_head_matches_transformers(ours, reference):
    ans, opts, i = key("strongest_head", inputs(ours, SENTENCE), score="prev_token")
    p = _prev_scores(reference["attentions"])
    li, hi = divmod(int(p.argmax()), p.shape[1])
    assert opts[i]["en"] == _label(li, hi) == "layer 17, head 1"
    # every distractor is clearly not a previous-token head (under half the best score): one right answer
    for o in opts:
        if o is not opts[i]:
            layer, head = (int(w) - 1 for w in o["en"].replace("layer ", "").replace(" head ", "").split(","))
            assert p[layer, head] < 0.5 * p.max(), o


def test_induction_head_matches_transformers(hf, ours):  # noqa: F811
    model, tok = ours
    ans, opts, i = key("strongest_head", inputs(ours, SENTENCE), score="induction")
    n = 50
    ids = heads.repeated_random_tokens(model.config.vocab_size, n, seed=0, exclude=special_ids(tok))
    assert torch.equal(ids[0, :n], ids[0, n:]) and not set(ids[0].tolist()) & special_ids(tok)
    with torch.no_grad():
        att = hf[0](ids, output_attentions=True).attentions
    a = torch.stack([x[0] for x in att]).double()  # (L, nh, 2n, 2n)
    score = torch.stack([a[..., t, t - n + 1] for t in range(n, 2 * n)], -1).mean(-1)  # (L, nh), by the definition
    li, hi = divmod(int(score.argmax()), score.shape[1])
    assert opts[i]["en"] == _label(li, hi) == "layer 19, head 7"
    assert float(score.max()) > 0.8
    assert ans.values["score"] == f"{float(score.max()):.4f}"


def test_massive_dimension_and_ratio_match_transformers(ours, reference):
    resid = reference["resid"]  # L+1 states (1, T, H)
    assert len(resid) == 31
    hits = {}
    for depth, h in enumerate(resid):
        a = h[0].double().abs()
        pos, dim = divmod(int(a.argmax()), a.shape[1])
        if a.max() > 100 and a.max() / a.median() > 1000:  # Sun et al.'s criterion
            hits[(pos, dim)] = hits.get((pos, dim), 0) + 1
    (pos, dim), _ = max(hits.items(), key=lambda kv: kv[1])
    s = inputs(ours, SENTENCE)
    ans, opts, i = key("massive_dimension", s)
    assert opts[i] == dim == 507 and pos == 0
    assert pos in opts  # the position read as a dimension is one of the wrong options
    peak = max(range(len(resid)), key=lambda d: float(resid[d].abs().max()))
    ratio = float(resid[peak][0].abs().max() / resid[peak][0].abs().median())
    ans, opts, i = key("massive_ratio", s)
    assert opts[i] == 10 ** round(torch.log10(torch.tensor(ratio)).item()) == 10_000
    assert abs(ans.values["ratio"] - ratio) <= 1e-3 * ratio


def test_lens_depth_matches_transformers(hf, ours, reference):  # noqa: F811
    model = hf[0]
    with torch.no_grad():
        top = [int(model.lm_head(model.model.norm(h[0, -1])).argmax()) for h in reference["resid"]]  # per depth
    final = top[-1]
    depth = len(top) - 1
    while depth > 0 and top[depth - 1] == final:
        depth -= 1
    ans, opts, i = key("lens_depth", inputs(ours, SENTENCE))
    assert opts[i] == depth == 30
    assert ans.values["final"] == "␣Madrid" and hf[1].decode([final]) == " Madrid"


def test_lens_depth_follows_the_text(ours):
    _, opts, i = key("lens_depth", inputs(ours, COUNTING))
    assert opts[i] == 29  # " eight" is on top one block earlier than " Madrid"


def test_kv_cache_size_matches_transformers_cache_and_the_formula(ours, reference):
    cache = reference["cache"]
    T = reference["ids"].shape[1]
    stored = sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers)  # float32: 4 bytes
    ans, opts, i = key("kv_cache_mib", inputs(ours, SENTENCE, **{"gen.ctx": T, "gen.dtype": "float32"}))
    assert opts[i] == pytest.approx(stored / 2**20)
    _, opts, i = key("kv_cache_mib", inputs(ours, SENTENCE, **{"gen.ctx": 8192, "gen.dtype": "bfloat16"}))
    assert opts[i] == 2 * 30 * 3 * 64 * 8192 * 2 / 2**20 == 180.0  # by hand
    assert sorted(opts) == [90.0, 180.0, 360.0, 540.0]  # keys only; right; float32; every query head stored
    _, opts2, i2 = key("kv_cache_mib", inputs(ours, SENTENCE, **{"gen.ctx": 2048, "gen.dtype": "bfloat16"}))
    assert opts2[i2] == 45.0


def test_keys_follow_the_text_and_the_model(ours):
    """The text changes the sink share; a different model (the app's default random-init one) changes every
    head, dimension and count."""
    a = key("first_token_share", inputs(ours, SENTENCE))
    b = key("first_token_share", inputs(ours, "The quick brown fox jumps over the lazy dog."))
    assert a[1][a[2]] != b[1][b[2]]
    small = StepInputs({}, lambda: build_parts({}))
    for name, args in [("total_heads", {}), ("strongest_head", {"score": "prev_token"}),
                       ("strongest_head", {"score": "induction"}), ("massive_dimension", {}), ("massive_ratio", {})]:
        big, tiny = key(name, inputs(ours, SENTENCE), **args), key(name, small, **args)
        assert correct_text(big[0]) != correct_text(tiny[0]), name


def test_the_lesson_text_names_the_heads_the_keys_find():
    """Steps 3, 5 and 7 show a head named in the file (to draw its heatmap); they are the heads the questions
    before them compute, and the massive dimension is the same on the Chinese poem (step 8 says "on any text")."""
    lesson = load(LESSON)
    steps = {s.number: s for s in lesson.steps}

    def the_key(n):
        step = steps[n]
        k = compute_key(lesson, step, StepInputs(step.settings, lambda: build_parts(step.settings)))
        return k.raw

    sink = the_key(2).highlight
    assert (steps[3].settings["attn.layer"], steps[3].settings["attn.head"]) == (sink["y"], sink["x"])
    for ask, show in ((4, 5), (6, 7)):
        v = the_key(ask).values
        assert (steps[show].settings["heads.layer"], steps[show].settings["heads.head"]) == (v["layer"], v["head"])
    poem = {**steps[8].settings, "input.text": "床前明月光，疑是地上霜。举头望明月，低头思故乡。"}
    assert REGISTRY["massive_dimension"](StepInputs(poem, lambda: build_parts(poem))).correct == the_key(8).correct
