"""The zh and en catalogs have identical keys and identical {placeholder} sets, and every key used in the
code exists in both catalogs."""

import re
from pathlib import Path

from ui.i18n import catalogs, placeholders, t

ROOT = Path(__file__).resolve().parents[2]


def test_catalogs_have_identical_keys():
    cat = catalogs()
    assert set(cat["en"]) == set(cat["zh"]), set(cat["en"]) ^ set(cat["zh"])


def test_catalogs_have_identical_placeholders():
    cat = catalogs()
    bad = {k: (placeholders(cat["en"][k]), placeholders(cat["zh"][k]))
           for k in cat["en"] if placeholders(cat["en"][k]) != placeholders(cat["zh"][k])}
    assert not bad


def test_chinese_catalog_is_chinese():
    # at least most strings carry CJK characters (a copy of the English catalog would fail this)
    zh = catalogs()["zh"]
    cjk = sum(bool(re.search(r"[\u4e00-\u9fff]", v)) for v in zh.values())
    assert cjk / len(zh) > 0.6


def test_every_literal_key_used_in_code_exists():
    keys = set(catalogs()["en"])
    used = set()
    for path in list(ROOT.glob("app_pages/*.py")) + list(ROOT.glob("ui/**/*.py")) + [ROOT / "app.py", ROOT / "explorer.py"]:
        used |= set(re.findall(r'\bt\(\s*"([a-z_]+\.[A-Za-z0-9_.]+)"', path.read_text(encoding="utf-8")))
    assert not (used - keys), sorted(used - keys)


def test_t_fills_placeholders_in_both_languages():
    assert t("input.truncated", lang="en", n=300, limit=256).startswith("The text has 300 tokens")
    assert "300" in t("input.truncated", lang="zh", n=300, limit=256)


def test_every_preset_names_its_source_in_both_languages_without_paths():
    """The preset caption names the tutorial by its title, never a folder outside the project."""
    from engine import PRESETS
    from ui.i18n import catalogs

    for lang, cat in catalogs().items():
        for name in PRESETS:
            text = cat[f"preset_source.{name}"]
            assert text and "/" not in text and "seeds" not in text, (lang, name, text)


# English strings that quote Chinese on purpose (a tutorial's words, a corpus name, the poem punctuation).
QUOTES_CHINESE = {"preset.gpt2_walkthrough", "preset_source.gpt2_walkthrough", "train.corpus.zh",
                  "train.learned_punct", "train.comma_metric", "train.period_metric", "train.comma_help",
                  "train.period_help", "train.poem_learned", "train.poem_frequency", "train.poem_not_yet",
                  "lens.whitespace", "tokcmp.explain"}  # the last two: 床 as the example of a split character


def test_english_catalog_has_no_chinese_outside_quotes():
    """A zh value pasted into the en catalog shows Chinese to an English session (the entropy map's 奈特)."""
    en = catalogs()["en"]
    han = sorted(k for k, v in en.items() if re.search(r"[\u4e00-\u9fff]", v) and k not in QUOTES_CHINESE)
    assert not han, han


def test_chinese_catalog_uses_one_word_for_token_and_for_a_depth():
    """zh pages say "token" (not 词元) and number depths "第 N 层" (not "第 N 块"), as most of the app does."""
    zh = catalogs()["zh"]
    assert not sorted(k for k, v in zh.items() if "词元" in v)
    assert not sorted(k for k, v in zh.items() if re.search(r"第 \S+ 块|共 \S+ 块", v))
