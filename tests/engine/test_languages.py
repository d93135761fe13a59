"""The rule that says a text is mostly outside a model's languages (engine/tokenizer/languages.py), on texts whose
letters are counted by hand."""

from engine.tokenizer.languages import mostly_outside, outside_share


def test_shares_counted_by_hand():
    assert outside_share("床前明月光，疑是地上霜。", ("en",)) == (1.0, 10)  # 10 Han letters; punctuation no letter
    assert outside_share("床前明月光，疑是地上霜。", ("zh",)) == (0.0, 10)
    assert outside_share("The cat 床", ("en",)) == (1 / 7, 7)  # T h e c a t are Latin, 床 is not
    assert outside_share("def f(x):\n    return x + 1", ("en",)) == (0.0, 12)  # d e f f x r e t u r n x


def test_mostly_means_more_than_half():
    assert mostly_outside("床前明月光", ("en",)) and not mostly_outside("The capital of France 床", ("en",))
    assert not mostly_outside("ab床前", ("en",))  # exactly half: not more than half
    assert mostly_outside("a床前", ("en",))


def test_no_letters_or_an_unknown_language_claim_nothing():
    assert outside_share("123 + 456 = 579", ("en",)) == (0.0, 0) and not mostly_outside("123 + 456", ("en",))
    assert not mostly_outside("床前明月光", ("xx",)) and not mostly_outside("床前明月光", ())
