"""Massive activations and attention sinks (namespace ``massive``), on the head-roles page."""

EN = {
    "massive.title": "Massive activations and attention sinks",
    "massive.explain": "Sun et al. 2024 (“Massive Activations in Large Language Models”) found that a few numbers in "
                       "the residual stream of many pretrained models are thousands of times larger than the rest "
                       "(their criterion: |h| > 100 and about 1,000 × the median |h|). Xiao et al. 2023 (“Efficient "
                       "Streaming Language Models with Attention Sinks”) found that many heads put much of their "
                       "attention on the first token. Below is what this model does on the sidebar text.",
    "massive.chart_title": "Largest |h| of the residual stream per depth, against the median |h| (log scale)",
    "massive.x": "depth (output of)",
    "massive.y": "|h|",
    "massive.max_name": "largest |h|",
    "massive.median_name": "median |h|",
    "massive.hover": "position {position}, dimension {dim}; {ratio} × median",
    "massive.embed": "embed",
    "massive.block": "block {n}",
    "massive.found": "On this text, after blocks {first}–{last} ({count} depths) the largest |h| is at position "
                     "{position}, dimension {dim}, up to {peak} (after block {peak_depth}), while the median |h| "
                     "there is {median_min}–{median_max}: these values meet Sun et al.'s criterion.",
    "massive.found_embed": "On this text, at depths {first}–{last} ({count} depths, 0 = embedding) the largest |h| is "
                           "at position {position}, dimension {dim}, up to {peak}, while the median |h| there is "
                           "{median_min}–{median_max}: these values meet Sun et al.'s criterion.",
    "massive.other_places": "The maximum also sits elsewhere at some depths: {places}.",
    "massive.place": "position {position}, dimension {dim} ({n}×)",
    "massive.none": "No value meets Sun et al.'s criterion on this text: the largest |h| is {peak} at depth {depth} "
                    "(position {position}, dimension {dim}), {ratio} × the median |h| there.",
    "massive.table_title": "Per depth",
    "massive.col.depth": "depth",
    "massive.col.max_abs": "largest |h|",
    "massive.col.position": "position",
    "massive.col.token": "token",
    "massive.col.dim": "dimension",
    "massive.col.median_abs": "median |h|",
    "massive.col.ratio": "largest / median",
    "massive.col.massive": "massive",
    "massive.sink_title": "Share of attention on the first token, per layer and head",
    "massive.sink_chart": "Mean attention weight on position 0 from every later query",
    "massive.sink_unit": "share",
    "massive.sinks": "On this text, {over} of {cells} heads put more than half of their attention on the first token "
                     "({tok}); averaged over all heads the share is {mean} (uniform attention would give "
                     "{uniform}). The largest is layer {layer} head {head}: {max}.",
    "massive.sink_and_massive": "The first token is also where the largest activation sits.",
    "massive.too_short": "The first-token share needs at least two tokens.",
}

ZH = {
    "massive.title": "巨量激活与注意力汇聚点",
    "massive.explain": "Sun 等（2024，《大语言模型中的巨量激活》）发现，许多预训练模型的残差流中有少数数值"
                       "比其余数值大几千倍（他们的标准：|h| > 100，且约为 |h| 中位数的 1000 倍）。Xiao 等（2023，《带注意力汇聚点的"
                       "高效流式语言模型》）发现许多注意力头把大量注意力放在第一个 token 上。"
                       "下面是当前模型在侧边栏文本上的表现。",
    "massive.chart_title": "每个深度残差流的最大 |h| 与 |h| 中位数（对数刻度）",
    "massive.x": "深度（哪一层的输出）",
    "massive.y": "|h|",
    "massive.max_name": "最大 |h|",
    "massive.median_name": "|h| 中位数",
    "massive.hover": "位置 {position}，维度 {dim}；是中位数的 {ratio} 倍",
    "massive.embed": "嵌入",
    "massive.block": "第 {n} 层",
    "massive.found": "在这段文本上，第 {first}–{last} 层之后（共 {count} 个深度）最大的 |h| 位于位置 {position}、维度 {dim}，"
                     "最高 {peak}（第 {peak_depth} 层之后），而那里 |h| 的中位数只有 {median_min}–{median_max}：这些值符合 Sun 等的标准。",
    "massive.found_embed": "在这段文本上，深度 {first}–{last}（共 {count} 个深度，0 为嵌入）最大的 |h| 位于位置 {position}、"
                           "维度 {dim}，最高 {peak}，而那里 |h| 的中位数只有 {median_min}–{median_max}：这些值符合 Sun 等的标准。",
    "massive.other_places": "在某些深度，最大值也出现在别处：{places}。",
    "massive.place": "位置 {position}、维度 {dim}（{n} 次）",
    "massive.none": "在这段文本上没有数值符合 Sun 等的标准：最大的 |h| 是 {peak}，在深度 {depth}（位置 {position}，维度 {dim}），"
                    "是那里 |h| 中位数的 {ratio} 倍。",
    "massive.table_title": "逐深度数据",
    "massive.col.depth": "深度",
    "massive.col.max_abs": "最大 |h|",
    "massive.col.position": "位置",
    "massive.col.token": "token",
    "massive.col.dim": "维度",
    "massive.col.median_abs": "|h| 中位数",
    "massive.col.ratio": "最大值 / 中位数",
    "massive.col.massive": "巨量",
    "massive.sink_title": "每层每个头落在第一个 token 上的注意力份额",
    "massive.sink_chart": "后面每个查询放在位置 0 上的平均注意力权重",
    "massive.sink_unit": "份额",
    "massive.sinks": "在这段文本上，{cells} 个头中有 {over} 个把一半以上的注意力放在第一个 token（{tok}）上；所有头平均的份额是 "
                     "{mean}（均匀注意力是 {uniform}）。最大的是第 {layer} 层第 {head} 头：{max}。",
    "massive.sink_and_massive": "第一个 token 也正是最大激活所在的位置。",
    "massive.too_short": "首 token 份额至少需要两个 token。",
}
