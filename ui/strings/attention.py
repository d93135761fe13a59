"""Attention page (namespace ``attn``) and the shared range-dependent controls (``ctl``)."""

EN = {
    "ctl.only_one": "{label}: {value} (the only one)",
    "attn.title": "Attention: who looks at whom",
    "attn.explain": "Each row is one query token and shows how its attention is spread over the keys it may see: "
                    "itself and the tokens before it. The stage buttons walk through the computation — raw scores "
                    "Q·Kᵀ, scaled by 1/√d, future cells removed, then softmax — so you can see where the triangle "
                    "comes from. In a randomly initialised model the rows are close to uniform; compare the entropy "
                    "of each head with the uniform reference.",
    "attn.layer": "Layer",
    "attn.head": "Head",
    "attn.stage": "Stage of the computation",
    "attn.stage.raw": "QKᵀ",
    "attn.stage.scaled": "QKᵀ/√d",
    "attn.stage.masked": "QKᵀ/√d + mask",
    "attn.stage.softmax": "softmax",
    "attn.stage_help": "raw = Q·Kᵀ; scaled = divided by √head_dim; masked = future cells removed; softmax = probabilities.",
    "attn.head_title": "Layer {layer}, head {head}",
    "attn.heatmap_title": "{stage} — layer {layer}, head {head}",
    "attn.x": "key (position and token)",
    "attn.sink_col": "sink",
    "attn.caption_window": "Layer {layer} is a sliding-window layer (window {w}): each query sees itself and at most "
                           "the {before} keys before it, so no row has more than {seen} visible keys; the grey band "
                           "at the lower left ({band} cells) is masked like the future, and its cache keeps only "
                           "those keys.",
    "attn.caption_sink": "The last column is this head's sink: a learned logit with no value that takes a share of "
                         "each row's softmax, here from {lo} to {hi} (most at query {q}); a row's key weights sum "
                         "to 1 minus its sink share (at query {q}: {rest}).",
    "attn.y": "query (position and token)",
    "attn.unit_prob": "probability",
    "attn.unit_score": "score",
    "attn.capped": "The input has {total} tokens; the heatmaps show the first {n}.",
    "attn.start": "First position shown",
    "attn.start_help": "The heatmap shows {n} query rows at a time, so every row stays readable; move the window along the text.",
    "attn.shown": "Shown: queries {q0}–{q1} and keys {k0}–{k1} of positions 0–{T} (keys after a query are masked anyway).",
    "attn.small_capped": "The small heatmaps show the first {n} of {total} tokens.",
    "attn.caption_masked": "Grey = masked future (a query may not look at later keys; these cells are not part of "
                           "the distribution, so they are left empty rather than drawn as 0).",
    "attn.caption_unmasked": "At this stage the causal mask is not applied yet: the cells above the diagonal are real "
                             "scores that the next stage removes. Colours are centred at 0 (red positive, blue negative).",
    "attn.row0": "Row 0 (the first token, {tok}) can only see itself, so its single weight is exactly 1.",
    "attn.row0_sink": "Row 0 (the first token, {tok}) can only see itself, but the sink joins its softmax too: its "
                      "weight on itself is {w} and the sink takes {share} (the two sum to 1).",
    "attn.row0_measured": "Row 0 (the first token, {tok}) can only see itself; its single weight is {w}.",
    "attn.heads_title": "All heads of layer {layer}",
    "attn.heads_chart": "Softmax attention of every head in layer {layer} (shared scale 0–1)",
    "attn.head_n": "head {head}",
    "attn.entropy_title": "How spread out is each head?",
    "attn.entropy_caption": "Entropy of a query's attention row, averaged over queries, in nats: 0 = all weight on one "
                            "key; the dashed line is uniform attention over the visible keys (the mean of ln(t+1)), the "
                            "largest value possible on this input.",
    "attn.entropy_chart": "Mean attention entropy per head, layer {layer}",
    "attn.head_axis": "head",
    "attn.layer_axis": "layer",
    "attn.entropy_axis": "entropy (nats)",
    "attn.entropy_unit": "nats",
    "attn.uniform": "uniform",
    "attn.overview_title": "Every layer and head at a glance",
    "attn.layer_short": "L{layer}",
    "attn.head_short": "H{head}",
    "attn.grid_chart": "Softmax attention, {L} layers × {nh} heads (shared scale 0–1)",
    "attn.grid_too_big": "{L} layers × {nh} heads = {cells} small heatmaps, more than the {cap} that stay readable; "
                         "the entropy map below summarises every head instead.",
    "attn.entropy_map": "Mean attention entropy, layers × heads (nats; uniform = {uniform})",
    "attn.checks_title": "Checks: rows sum to 1, nothing above the diagonal",
    "attn.checks_caption": "For every layer, the largest |row sum − 1| over all heads and queries (a sink's share "
                           "counted in its row), and the largest weight in a masked cell (above the diagonal, and "
                           "before a sliding window). The mask makes those cells exactly 0, not just small.",
    "attn.col.layer": "layer",
    "attn.col.row_sum": "max |row sum − 1|",
    "attn.col.upper": "max weight in masked cells",
    "attn.col.verdict": "OK?",
    "attn.pass": "✅ pass",
    "attn.fail": "❌ fail",
    "attn.checks_ok": "All {L} layers pass: every row sums to 1 (within {tol}) and every weight above the diagonal is exactly 0.",
    "attn.checks_bad": "Check failed in layer(s) {layers}: the attention weights are not a valid causal distribution "
                       "(often NaN/Inf from a huge init std).",
}

ZH = {
    "ctl.only_one": "{label}：{value}（只有一个）",
    "attn.title": "注意力：谁在看谁",
    "attn.explain": "每一行是一个查询 token，显示它的注意力如何分配到它能看到的键上：它自己和它之前的 token。"
                    "“计算阶段”按钮逐步展示计算过程——原始分数 Q·Kᵀ、乘以 1/√d 缩放、去掉未来位置、再做 softmax——"
                    "由此可以看出下三角是怎么来的。随机初始化的模型中各行接近均匀分布；可以把每个头的熵和均匀分布的参考值对比。",
    "attn.layer": "层",
    "attn.head": "头",
    "attn.stage": "计算阶段",
    "attn.stage.raw": "QKᵀ",
    "attn.stage.scaled": "QKᵀ/√d",
    "attn.stage.masked": "QKᵀ/√d + 掩码",
    "attn.stage.softmax": "softmax",
    "attn.stage_help": "原始 = Q·Kᵀ；缩放 = 除以 √head_dim；掩码 = 去掉未来位置；softmax = 概率。",
    "attn.head_title": "第 {layer} 层，第 {head} 个头",
    "attn.heatmap_title": "{stage} —— 第 {layer} 层，第 {head} 个头",
    "attn.x": "键（位置与 token）",
    "attn.sink_col": "汇聚点",
    "attn.caption_window": "第 {layer} 层是滑动窗口层（窗口 {w}）：每个查询只看见自己和前面最多 {before} 个键，所以任何一行"
                           "可见的键都不超过 {seen} 个；左下方的灰色带（{band} 个格子）和未来一样被掩码，它的缓存也只保留"
                           "窗口里的键。",
    "attn.caption_sink": "最后一列是这个头的注意力汇聚点：一个学到的、没有值向量的 logit，它分走每一行 softmax 的一部分，"
                         "这里从 {lo} 到 {hi}（最多的是查询 {q}）；一行中各个键的权重之和等于 1 减去它的汇聚份额"
                         "（查询 {q}：{rest}）。",
    "attn.y": "查询（位置与 token）",
    "attn.unit_prob": "概率",
    "attn.unit_score": "分数",
    "attn.capped": "输入共有 {total} 个 token；热力图只显示前 {n} 个。",
    "attn.start": "显示的第一个位置",
    "attn.start_help": "热力图一次显示 {n} 行查询，每一行都清晰可读；移动窗口即可沿文本查看。",
    "attn.shown": "当前显示：查询 {q0}–{q1}，键 {k0}–{k1}（位置共 0–{T}；查询之后的键本来就被遮蔽）。",
    "attn.small_capped": "小热力图只显示 {total} 个 token 中的前 {n} 个。",
    "attn.caption_masked": "灰色 = 被掩码的未来位置（查询不能看后面的键；这些格子不属于概率分布，因此留空，而不是画成 0）。",
    "attn.caption_unmasked": "这一阶段还没有应用因果掩码：对角线上方的格子是真实分数，下一阶段才会被去掉。颜色以 0 为中心（红为正，蓝为负）。",
    "attn.row0": "第 0 行（第一个 token，{tok}）只能看到它自己，所以它唯一的权重恰好是 1。",
    "attn.row0_sink": "第 0 行（第一个 token，{tok}）只能看到它自己，但汇聚点也加入了它的 softmax："
                      "它在自己身上的权重是 {w}，汇聚点拿走 {share}（两者之和为 1）。",
    "attn.row0_measured": "第 0 行（第一个 token，{tok}）只能看到它自己；它唯一的权重是 {w}。",
    "attn.heads_title": "第 {layer} 层的所有头",
    "attn.heads_chart": "第 {layer} 层每个头的 softmax 注意力（统一色标 0–1）",
    "attn.head_n": "头 {head}",
    "attn.entropy_title": "每个头的注意力有多分散？",
    "attn.entropy_caption": "一个查询的注意力行的熵，对所有查询取平均，单位为奈特（以 e 为底的对数单位）：0 = 全部权重落在一个键上；"
                            "虚线是在可见键上均匀分配注意力时的熵（ln(t+1) 的平均值），也是这段输入上可能的最大值。",
    "attn.entropy_chart": "第 {layer} 层每个头的平均注意力熵",
    "attn.head_axis": "头",
    "attn.layer_axis": "层",
    "attn.entropy_axis": "熵（奈特）",
    "attn.entropy_unit": "奈特",
    "attn.uniform": "均匀",
    "attn.overview_title": "一览所有层和头",
    "attn.layer_short": "第{layer}层",
    "attn.head_short": "头{head}",
    "attn.grid_chart": "softmax 注意力，{L} 层 × {nh} 个头（统一色标 0–1）",
    "attn.grid_too_big": "{L} 层 × {nh} 个头 = {cells} 个小热力图，超过了仍可阅读的 {cap} 个；下方的熵图改为概括每个头。",
    "attn.entropy_map": "平均注意力熵，层 × 头（奈特；均匀 = {uniform}）",
    "attn.checks_title": "检查：每行之和为 1，对角线上方没有权重",
    "attn.checks_caption": "对每一层，给出所有头和查询中最大的 |行和 − 1|（有汇聚点时把它的份额算进该行），以及被掩码格子"
                           "（对角线上方，以及滑动窗口之前）中的最大权重。掩码使这些格子恰好为 0，而不只是很小。",
    "attn.col.layer": "层",
    "attn.col.row_sum": "最大 |行和 − 1|",
    "attn.col.upper": "被掩码格子中的最大权重",
    "attn.col.verdict": "通过？",
    "attn.pass": "✅ 通过",
    "attn.fail": "❌ 未通过",
    "attn.checks_ok": "全部 {L} 层通过：每行之和为 1（误差在 {tol} 以内），对角线上方的权重全部恰好为 0。",
    "attn.checks_bad": "第 {layers} 层检查未通过：注意力权重不是有效的因果分布（通常是初始化标准差过大导致 NaN/Inf）。",
}
