"""Head-roles page (namespace ``heads``) and the shared real-model notice (``views``)."""

EN = {
    "nav.heads": "Head roles & sinks",
    "views.random_model": "This model has random weights: the roles, sinks, massive activations and lens below need "
                          "a pretrained model to show anything (load SmolLM2-135M or another checkpoint in the "
                          "sidebar). With random weights every head attends almost uniformly.",
    "views.trained_model": "This model was trained for seconds in this session: expect at most faint roles. "
                           "A pretrained checkpoint (SmolLM2-135M) shows them clearly.",
    "views.random_model_short": "Random weights: these views need a pretrained model (SmolLM2 in the sidebar).",
    "views.trained_model_short": "Trained for seconds: at most faint roles (SmolLM2 in the sidebar shows them).",
    "heads.title": "Head roles: what each attention head does",
    "heads.explain": "Every head of every layer gets four scores, each an average attention weight. Previous-token: "
                     "how much a token looks at the token just before it. Induction (Olsson et al. 2022): on a "
                     "random token sequence repeated twice, how much a token of the second copy looks at the token "
                     "that followed its earlier occurrence — the head that lets a model continue a pattern it has "
                     "seen. First token: how much attention goes to position 0 (an attention sink). Entropy: how "
                     "spread out the attention is. Click a cell of the map to open that head.",
    "heads.progress_text": "Running the text through the model…",
    "heads.progress_repeat": "Running the repeated random sequence ({n} + {n} tokens)…",
    "heads.progress_scores": "Scoring {cells} heads…",
    "heads.score": "Score shown on the map",
    "heads.score.prev_token": "previous token",
    "heads.score.induction": "induction",
    "heads.score.first_token": "first token (sink)",
    "heads.score.entropy": "entropy",
    "heads.map_title": "{score} score of every head (click a cell to open that head)",
    "heads.map_title_entropy": "Mean attention entropy of every head, nats (click a cell to open that head)",
    "heads.head_axis": "head",
    "heads.layer_axis": "layer",
    "heads.unit_score": "mean weight",
    "heads.unit_nats": "nats",
    "heads.induction_note": "Induction is measured on {n} random tokens followed by the same {n} tokens (seed 0, "
                            "special tokens excluded), not on the sidebar text: from query t in the second copy, the "
                            "weight on key t−{n}+1. Uniform attention would score {uniform}.",
    "heads.top_sentence": "Highest {score} scores: {heads}. Uniform attention would score {uniform}.",
    "heads.top_item": "layer {layer} head {head} ({value})",
    "heads.none_stands_out": "No head stands out: the highest {score} score is {value} (layer {layer} head {head}), "
                             "less than twice the uniform-attention score {uniform}.",
    "heads.entropy_sentence": "Most focused heads (lowest entropy): {heads}. Uniform attention over the visible "
                              "tokens has entropy {uniform} nats.",
    "heads.layer": "Layer",
    "heads.head": "Head",
    "heads.selected_title": "Layer {layer}, head {head} on the sidebar text",
    "heads.metric.prev_token": "previous token",
    "heads.metric.induction": "induction",
    "heads.metric.first_token": "first token",
    "heads.metric.entropy": "entropy (nats)",
    "heads.metric.text_induction": "induction on this text",
    "heads.no_repeat": "—",
    "heads.text_induction_help": "Weight on the token after an earlier occurrence of the current token, over the "
                                 "tokens of the sidebar text that occurred before (— when no token repeats).",
    "heads.heatmap_title": "Attention of layer {layer}, head {head}",
    "heads.repeat_title": "The same head on the repeated random sequence ({n} + {n} tokens)",
    "heads.repeat_caption": "An induction head draws a stripe parallel to the diagonal in the lower half, {n} − 1 "
                            "cells left of it: each token of the second copy looks at the token after its first "
                            "occurrence.",
    "heads.x": "key (position and token)",
    "heads.y": "query (position and token)",
    "heads.unit_prob": "probability",
    "heads.capped": "The input has {total} tokens; the heatmap shows the first {n}.",
    "heads.table_title": "Every head's scores",
    "heads.col.layer": "layer",
    "heads.col.head": "head",
    "heads.col.prev_token": "previous token",
    "heads.col.induction": "induction",
    "heads.col.first_token": "first token",
    "heads.col.entropy": "entropy (nats)",
    "heads.col.text_induction": "induction on text",
    "heads.too_short": "The text has a single token: previous-token and first-token scores need at least two.",
}

ZH = {
    "nav.heads": "注意力头的角色与汇聚点",
    "views.random_model": "当前模型是随机权重：下面的头角色、注意力汇聚点、巨量激活和 logit 透镜需要预训练模型才能看出规律"
                          "（在侧边栏加载 SmolLM2-135M 或其他检查点）。随机权重下每个头的注意力都接近均匀。",
    "views.trained_model": "当前模型只在本次会话中训练了几秒：最多能看到很弱的角色。预训练检查点（SmolLM2-135M）能清楚地显示它们。",
    "views.random_model_short": "随机权重：这些视图需要预训练模型（在侧边栏加载 SmolLM2）。",
    "views.trained_model_short": "只训练了几秒：最多能看到很弱的角色（侧边栏的 SmolLM2 能清楚地显示）。",
    "heads.title": "注意力头的角色：每个头在做什么",
    "heads.explain": "每一层的每个头都有四个分数，每个分数都是平均注意力权重。前一 token：一个 token 看它紧前面那个 token 的程度。"
                     "归纳（Olsson 等，2022）：在重复两遍的随机 token 序列上，第二遍中的 token 看“它上次出现时后面那个 token”的程度——"
                     "这种头让模型能把见过的模式接着写下去。首 token：有多少注意力落在位置 0（注意力汇聚点）。熵：注意力有多分散。"
                     "点击图上的格子即可打开那个头。",
    "heads.progress_text": "正在让文本通过模型……",
    "heads.progress_repeat": "正在运行重复的随机序列（{n} + {n} 个 token）……",
    "heads.progress_scores": "正在给 {cells} 个头打分……",
    "heads.score": "图中显示的分数",
    "heads.score.prev_token": "前一 token",
    "heads.score.induction": "归纳",
    "heads.score.first_token": "首 token（汇聚点）",
    "heads.score.entropy": "熵",
    "heads.map_title": "每个头的{score}分数（点击格子打开该头）",
    "heads.map_title_entropy": "每个头的平均注意力熵，单位奈特（点击格子打开该头）",
    "heads.head_axis": "头",
    "heads.layer_axis": "层",
    "heads.unit_score": "平均权重",
    "heads.unit_nats": "奈特",
    "heads.induction_note": "归纳分数不是在侧边栏文本上测的，而是在 {n} 个随机 token 后接同样 {n} 个 token 的序列上测的（种子 0，"
                            "不含特殊 token）：第二遍中查询 t 对键 t−{n}+1 的权重。均匀注意力的得分是 {uniform}。",
    "heads.top_sentence": "{score}分数最高的头：{heads}。均匀注意力的得分是 {uniform}。",
    "heads.top_item": "第 {layer} 层第 {head} 头（{value}）",
    "heads.none_stands_out": "没有突出的头：最高的{score}分数是 {value}（第 {layer} 层第 {head} 头），不到均匀注意力得分 {uniform} 的两倍。",
    "heads.entropy_sentence": "最集中的头（熵最低）：{heads}。在可见 token 上均匀分布的注意力的熵是 {uniform} 奈特。",
    "heads.layer": "层",
    "heads.head": "头",
    "heads.selected_title": "第 {layer} 层第 {head} 头在侧边栏文本上",
    "heads.metric.prev_token": "前一 token",
    "heads.metric.induction": "归纳",
    "heads.metric.first_token": "首 token",
    "heads.metric.entropy": "熵（奈特）",
    "heads.metric.text_induction": "本文本上的归纳",
    "heads.no_repeat": "—",
    "heads.text_induction_help": "对于侧边栏文本中此前出现过的 token：落在它上次出现之后那个 token 上的权重（没有重复 token 时为 —）。",
    "heads.heatmap_title": "第 {layer} 层第 {head} 头的注意力",
    "heads.repeat_title": "同一个头在重复的随机序列上（{n} + {n} 个 token）",
    "heads.repeat_caption": "归纳头会在下半部分画出一条与对角线平行、向左偏 {n} − 1 格的斜线：第二遍中的每个 token 都看向它第一次出现时后面的那个 token。",
    "heads.x": "键（位置和 token）",
    "heads.y": "查询（位置和 token）",
    "heads.unit_prob": "概率",
    "heads.capped": "输入有 {total} 个 token；热力图只显示前 {n} 个。",
    "heads.table_title": "所有头的分数",
    "heads.col.layer": "层",
    "heads.col.head": "头",
    "heads.col.prev_token": "前一 token",
    "heads.col.induction": "归纳",
    "heads.col.first_token": "首 token",
    "heads.col.entropy": "熵（奈特）",
    "heads.col.text_induction": "文本上的归纳",
    "heads.too_short": "文本只有一个 token：前一 token 和首 token 分数至少需要两个 token。",
}
