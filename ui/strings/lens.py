"""Logit-lens view (namespace ``lens``) on the "Logit lens & tokenizers" page."""

EN = {
    "nav.lens": "Logit lens & tokenizers",
    "lens.title": "Logit lens: what the model would predict if it stopped early",
    "lens.explain": "The residual stream after each block is passed through the model's own final norm and LM head, "
                    "as if that block were the last one (nostalgebraist 2020). Each cell shows the top token of "
                    "that early read-out; its colour is the probability the read-out gives the token the full model "
                    "finally predicts at that position. This is the raw lens: nothing is trained to translate early "
                    "layers, so their read-outs are often noise; at the last depth the lens is the model's own output.",
    "lens.progress": "Decoding {depths} depths × {positions} positions through the LM head…",
    "lens.window": "First position shown",
    "lens.window_help": "The heatmap shows {n} positions at a time; move the window along the text.",
    "lens.depth_window": "First depth shown",
    "lens.depth_window_help": "The heatmap shows {n} depths at a time, so every row stays readable; move the window up or down the model.",
    "lens.shown": "Shown: depths {d0}–{d1} of 0–{L} ({first} to {last}), positions {p0}–{p1} of 0–{T}.",
    "lens.chart_title": "Raw logit lens: top token per depth and position (colour: probability of the final prediction)",
    "lens.x": "position and input token (the prediction is for the next token)",
    "lens.y": "depth (output of)",
    "lens.unit": "p(final)",
    "lens.hover": "top: {top} (p = {top_prob})<br>final prediction {final}: p = {p_final}",
    "lens.embed": "embed",
    "lens.block": "block {n}",
    "lens.last_sentence": "At the last position (input {tok}) the model predicts {final} with p = {p}. The lens "
                          "ranks it first from {depth} on; after the embedding its probability was {p0}.",
    "lens.median_sentence": "Over all {positions} positions, the final prediction becomes and stays the lens's top token "
                            "at depth {median} of {L} (median; 0 = embedding).",
    "lens.whitespace": "In token text, ␣ is a space, ⏎ a newline and ⇥ a tab; ‹E5 BA› are bytes that are only part of a character, followed by that character when the neighbouring tokens complete it and by which of its tokens this one is (床 = ‹E5 BA›床₁/₂ + ‹8A›床₂/₂). In the heatmap's cells the bytes are written without spaces (‹E5BA›) and a long token ends in …; hover a cell for the whole token.",
    "lens.all_run": "Decode all {positions} positions",
    "lens.all_on_request": "The heatmap decodes the {shown} positions it draws. The median over all {positions} "
                           "positions and the whole table decode every position at every depth through the LM head "
                           "(about {gflop} GFLOP), so on a model this large they wait for the button; once decoded, "
                           "every session with the same text sees them at once.",
    "lens.table_title": "Lens table (every depth and position)",
    "lens.col.depth": "depth",
    "lens.col.position": "position",
    "lens.col.input": "input token",
    "lens.col.top": "lens top token",
    "lens.col.top_prob": "p(top)",
    "lens.col.final": "final prediction",
    "lens.col.p_final": "p(final)",
    "lens.col.rank_final": "rank of final",
}

ZH = {
    "nav.lens": "Logit 透镜与分词器",
    "lens.title": "Logit 透镜：如果模型提前停下，它会预测什么",
    "lens.explain": "把每一层之后的残差流送进模型自己的最终归一化和输出头（lm_head），就好像这一层是最后一层一样"
                    "（nostalgebraist 2020）。每个格子显示这种提前读出的第一名 token；颜色是这次读出给“完整模型最终在该位置预测的 token”"
                    "的概率。这是原始的透镜（raw logit lens）：没有训练任何东西来翻译前面的层，所以前面层的读出常常是噪声；在最后一个深度，透镜就是模型自己的输出。",
    "lens.progress": "正在把 {depths} 个深度 × {positions} 个位置送进输出头解码……",
    "lens.window": "显示的第一个位置",
    "lens.window_help": "热力图一次显示 {n} 个位置；移动窗口即可沿文本查看。",
    "lens.depth_window": "显示的第一个深度",
    "lens.depth_window_help": "热力图一次显示 {n} 个深度，每一行都清晰可读；移动窗口即可沿模型上下查看。",
    "lens.shown": "当前显示：深度 {d0}–{d1}（共 0–{L}，{first} 至 {last}），位置 {p0}–{p1}（共 0–{T}）。",
    "lens.chart_title": "原始 logit 透镜：每个深度和位置的第一名 token（颜色：最终预测的概率）",
    "lens.x": "位置和输入 token（预测的是下一个 token）",
    "lens.y": "深度（哪一层的输出）",
    "lens.unit": "p(最终)",
    "lens.hover": "第一名：{top}（p = {top_prob}）<br>最终预测 {final}：p = {p_final}",
    "lens.embed": "嵌入",
    "lens.block": "第 {n} 层",
    "lens.last_sentence": "在最后一个位置（输入{tok}），模型以 p = {p} 预测{final}。透镜从{depth}起把它排在第一；"
                          "嵌入之后它的概率是 {p0}。",
    "lens.median_sentence": "在全部 {positions} 个位置上，最终预测成为并保持透镜第一名的深度中位数是 {median}（共 {L} 层；0 为嵌入）。",
    "lens.whitespace": "token 文本中，␣ 表示空格，⏎ 表示换行，⇥ 表示制表符；‹E5 BA› 是只占某个字符一部分的字节，若相邻的 token 补全了这个字符，后面会写出该字符以及这是拼出它的第几个 token（床 = ‹E5 BA›床₁/₂ + ‹8A›床₂/₂）。热力图格子里字节不加空格（‹E5BA›），过长的 token 以 … 结尾；把鼠标移到格子上可看到完整 token。",
    "lens.all_run": "解码全部 {positions} 个位置",
    "lens.all_on_request": "热力图只解码它画出的 {shown} 个位置。全部 {positions} 个位置的中位数和完整数据表要把每个位置"
                           "在每个深度都送进输出头解码（约 {gflop} GFLOP），模型这么大时要按下按钮才计算；解码之后，"
                           "文本相同的每个会话都会立即看到。",
    "lens.table_title": "透镜数据表（所有深度和位置）",
    "lens.col.depth": "深度",
    "lens.col.position": "位置",
    "lens.col.input": "输入 token",
    "lens.col.top": "透镜第一名",
    "lens.col.top_prob": "p(第一名)",
    "lens.col.final": "最终预测",
    "lens.col.p_final": "p(最终)",
    "lens.col.rank_final": "最终预测的名次",
}
