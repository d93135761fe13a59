"""zh pages in Chinese, in a real browser: every page reached by clicking the navigation in a fresh context
switched to 中文; the visible text (``document.body.innerText``, sidebar included) and every string of every
Plotly figure (titles, tick text, legend names, hover templates, cell text, annotations; read from the page's
own plotly divs) may contain no ASCII word of three or more letters outside a short reviewed allow-list of
technical identifiers. Code identifiers (``embed_tokens``, ``self_attn`` ...) count only next to Chinese.

Model output is not interface text: a random-init model's next tokens are pieces of the bundled corpus, which
has English in it (Genesis). The pages mark those texts, and the test reads them out before looking for English:
token chips and tables are shown in code spans / dataframes (``code``, ``pre``, ``[data-testid=stDataFrame]``),
and Plotly tick text made of tokens comes from ``ui.escape`` (never translated). See ``TOKEN_CONTEXTS``.
"""

from __future__ import annotations

import re

import pytest

from tests.browser_support import CHART, CHARTLESS, NAV_LINKS, SHOTS, assert_clean, click_nav, open_app, settle

pytestmark = [pytest.mark.browser]

# Reviewed: standard names a student meets in papers and code (architectures, functions, file formats, keys).
ALLOWED = {
    # architectures, components and methods
    "GELU", "ReLU", "SwiGLU", "SiLU", "RoPE", "RMSNorm", "LayerNorm", "Pre-Norm", "Post-Norm", "BPE", "GPT",
    "GPT-2", "Llama", "Qwen", "Qwen2", "Qwen3", "Gemma", "OLMo-2", "Mistral", "Mixtral", "gpt-oss", "IOI", "SmolLM", "SmolLM2", "SmolLM2-135M", "SmolLM2-135M-Instruct", "MiniMind",
    "Transformer", "softmax", "logit", "logits", "Logit", "FFN", "MLP", "GQA", "MHA", "MQA", "AdamW", "Adam",
    "SDPA", "UTF-8", "GGUF", "Top-k", "Top-p", "Min-p", "top-k", "top-p", "min-p", "KV", "QKV",
    # file formats and keys
    "CSV", "HTML", "JSON", "PNG", "URL", "NaN", "Inf", "UNK", "PageUp", "PageDown", "Enter", "Esc", "CPU",
    "Streamlit", "PyTorch", "transformers", "TransformerLens", "tokenizers", "NumPy", "Hugging", "Face", "MiB", "GiB", "FLOPs",
    "top-1", "RMS", "Pre-LN", "Post-LN", "log", "exp", "Block", "token",
    # the language switch names each language in its own script; config values as JSON shows them
    "Language", "English", "true", "false", "None",
    # authors of the papers the pages cite (titles are translated)
    "Xiong", "Olsson", "Elhage", "Sun", "Xiao", "Radford", "Touvron", "nostalgebraist",
    # math names (h before / after the norm placements)
    "h_pre", "h_post",
    # config fields and Hugging Face argument names a lecturer maps to code
    "logits_to_keep", "ignore_index", "past_key_values", "use_cache", "head_dim", "input_ids",
}
# Code identifiers and English terms of the literature: allowed only in a text that also holds Chinese (the
# Chinese name next to the code name, e.g. 输出头（lm_head）).
CODE_NAMES = {"embed_tokens", "embed_positions", "self_attn", "mlp", "lm_head", "norm", "q_proj", "k_proj",
              "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "input_layernorm",
              "post_attention_layernorm", "hidden_size", "vocab_size", "num_hidden_layers", "num_attention_heads",
              "num_key_value_heads", "intermediate_size", "hidden_act", "tie_word_embeddings", "rope_theta",
              "max_position_embeddings", "initializer_range", "rms_norm_eps", "norm_eps", "bias", "seed",
              "attention_bias", "labels", "betas", "float32", "torch", "equal", "state_dict", "ByteLevel", "d_model",
              "raw", "logit", "lens", "bfloat16", "float16", "run_with_hooks"}
NAMES = r"GPT-2 small|Llama-3-8B|Gemma-3-1B|MiniMind-MoE|SmolLM2-135M(-Instruct)?"  # model names as published
HOOK = r"(blocks\.\d+\.(attn\.|mlp\.)?hook_\w+|ln_final\.hook_\w+|hook_\w+)"  # TransformerLens activation names
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-.]*[A-Za-z0-9]")

# The text a person sees: every rendered text node (hidden elements, icon ligatures, token displays, code,
# formulas and charts left out; charts are read from their figure below), one string per node.
VISIBLE_TEXT = """() => {
  const skip = 'mark, .katex, code, pre, [data-testid="stDataFrame"], [data-testid="stPlotlyChart"], [data-testid="stTable"], '
             + '[data-testid="stIconMaterial"], .tok-chip, script, style, noscript';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const out = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip) || !el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    const r = el.getBoundingClientRect();  // off-screen until focused (Streamlit's "skip to content" link)
    if (r.right <= 0 || r.bottom <= 0 || r.width <= 1 || r.height <= 1) continue;
    if (n.textContent.trim()) out.push(n.textContent);
  }
  return out;
}"""

# Every string a Plotly figure on the page can show. Arrays that Plotly ships base64-encoded are skipped.
FIGURE_STRINGS = """() => {
  const skip = new Set(['bdata', 'dtype', 'shape', 'type', 'mode', 'colorscale', 'family', 'color', 'bgcolor',
    'bordercolor', 'fillcolor', 'hoverinfo', 'anchor', 'overlaying', 'side', 'xref', 'yref', 'xanchor', 'yanchor',
    'tickmode', 'ticks', 'autorange', 'textposition', 'orientation', 'symbol', 'dash', 'layer', 'template',
    'barmode', 'hovermode', 'clickmode', 'dragmode', 'valign', 'align', 'uid', 'legendgroup', 'tickformat',
    'hoverformat', 'xaxis', 'yaxis', 'constraintoward', 'scaleanchor', 'matches', 'sizemode', 'fill', 'shape',
    'line', 'insidetextanchor', 'textangle', 'automargin', 'exponentformat', 'showexponent', 'categoryorder',
    'ticklabelposition', 'constrain', 'rangemode', 'groupnorm', 'stackgroup', 'histfunc', 'connectgaps',
    'texttemplatefallback', 'coloraxis', 'traceorder', 'meta']);
  const out = [];
  const walk = (v, path) => {
    if (typeof v === 'string') { out.push({path: path.join('.'), s: v}); return; }
    if (Array.isArray(v)) { v.forEach(w => walk(w, path)); return; }
    if (v && typeof v === 'object' && !ArrayBuffer.isView(v)) {
      for (const [k, w] of Object.entries(v))
        if (!k.startsWith('_') && !skip.has(k) && !k.endsWith('color')) walk(w, path.concat([k]));
    }
  };
  document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').forEach(gd => {
    // a trace names the fields that hold model tokens (meta.token_fields): model output, not interface text
    (gd.data || []).forEach(tr => walk(Object.fromEntries(Object.entries(tr).filter(
      ([k]) => !((tr.meta || {}).token_fields || []).includes(k))), ['data']));
    walk(gd.layout || {}, ['layout']);
  });
  return out;
}"""


def english_words(text: str) -> set[str]:
    """ASCII words of 3+ letters in ``text`` (one text node or one figure string) that are neither reviewed
    identifiers nor code names in a Chinese text (Plotly placeholders, HTML tags and entities, number formats and
    activation names removed first)."""
    text = re.sub(r"%\{[^}]*\}|<[^>]+>|&[a-z]+;|&#\d+;|" + NAMES + "|" + HOOK, " ", text)
    found = set()
    for m in WORD.finditer(text):
        w = m.group(0).strip(".-")
        if sum(c.isalpha() for c in w) < 3 or w in ALLOWED:
            continue
        if re.fullmatch(r"\d*[eE][+-]?\d+|0x[0-9A-Fa-f]+|(?:[0-9A-F]{2})+", w):  # 1e-4, 0xE5, bytes ‹E5BA›
            continue
        if all(part in CODE_NAMES or part.isdigit() or part == "layers" for part in w.split(".")) and CJK.search(text):
            continue
        found.add(w)
    return found


def test_english_words_detector():
    assert english_words("第 1 层，softmax 概率，RMSNorm 与 GELU") == set()
    assert english_words("查询 %{y} → 键 %{x}<extra>blocks.0.hook_resid_pre</extra>") == set()
    assert english_words("query 3 → key 2, 第 1 层") == {"query", "key"}
    assert english_words("词嵌入 embed_tokens，final norm") == {"final"}
    assert english_words("embed_tokens") == {"embed_tokens"}  # a code name alone is not explained
    assert english_words("最大 1e-4，字节 <0xE5>") == set()
    assert english_words("字节 ‹E5 BA›床₁/₂，格子里连写 ‹E5BA›") == set()  # bytes in the token notation
    assert english_words("layers.0.self_attn（自注意力）") == set()
    assert english_words("Causal mask 因果掩码") == {"Causal", "mask"}


def _page_findings(page) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for node in page.evaluate(VISIBLE_TEXT):
        for word in english_words(node):
            found.setdefault(word, set()).add(f"text: {node.strip()[:60]}")
    for item in page.evaluate(FIGURE_STRINGS):
        for word in english_words(item["s"]):
            found.setdefault(word, set()).add(item["path"])
    return {w: sorted(where)[:3] for w, where in sorted(found.items())}


def test_zh_pages_have_no_english_words(server, browser):
    page = open_app(browser, server, 1440, 1000, lang="zh", timeout=300_000)
    try:
        found = {}
        for i in range(page.locator(NAV_LINKS).count()):
            path = (click_nav(page, i, timeout=300_000) if i else "") or "overview"  # a loaded 2-core machine
            assert_clean(page)
            if path not in CHARTLESS:  # the lab draws charts once a run starts; the lesson list has none...
                page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=300_000)
                settle(page, 1000, timeout=300_000)
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / f"zh-text-{path}.png"), full_page=True)
            words = _page_findings(page)
            print(f"zh page {path}: {words or 'no English'}", flush=True)
            if words:
                found[path] = words
        assert not found, f"English words on zh pages: {found}"
    finally:
        page.close()
