"""Next-token page (namespace ``next``)."""

EN = {
    "next.title": "Next token: what the model would say",
    "next.explain": "The logits at position t, passed through a softmax, are the model's probabilities for token "
                    "t+1. Slide the position to see the prediction made after every prefix, and the temperature to "
                    "sharpen or flatten it.",
    "next.explain_random": "A randomly initialised model, like this one, spreads its probability almost evenly over "
                           "all V tokens (about 1/V each), so its continuations are gibberish until it is trained.",
    "next.explain_trained": "Training moves the probability onto the tokens that fit the text; a randomly "
                            "initialised model (the sidebar's random init) spreads it almost evenly over all V tokens "
                            "(about 1/V each).",
    "next.position": "Position t (predicts token t+1)",
    "next.position_help": "The last position predicts the token after the input, which is what generation uses.",
    "next.k": "Show the top k",
    "next.temperature": "Temperature",
    "next.temperature_explain": "p = softmax(logits / temperature). Below 1 the distribution gets sharper (the "
                                "favourite gains), above 1 it gets flatter (towards uniform); the order of the tokens "
                                "never changes, so greedy decoding ignores the temperature.",
    "next.dist_title": "After position {pos} ({tok}): which token comes next?",
    "next.chart_title": "Top {k} next-token probabilities at position {pos} (temperature {temp})",
    "next.x": "probability (%)",
    "next.y": "rank and token",
    "next.mass": "These {k} tokens hold {mass} of the probability; the other tokens of the V = {v} vocabulary share the "
                 "rest (uniform would be {uniform} each).",
    "next.actual": "The token that actually follows is {tok}: probability {p}, rank {rank} of {v}.",
    "next.gen_title": "A short continuation",
    "next.new_tokens": "New tokens",
    "next.greedy": "Greedy (always the most likely token)",
    "next.greedy_help": "Off: sample from softmax(logits / temperature) with the init seed, so the result is reproducible.",
    "next.generating": "Generating…",
    "next.mode_greedy": "greedy",
    "next.mode_sample": "sampled at temperature {temp}, seed {seed}",
    "next.gen_caption": "Highlighted: {n} new tokens ({mode}), each predicted from the last position only:",
    "next.stopped": "Stopped after {got} of {want} tokens: {pe} position embeddings only exist for the first {limit} "
                    "positions, so the model cannot read a longer sequence.",
    "next.nonfinite": "The logits contain NaN or Inf, so there is nothing to generate from. Lower the init std.",
    "next.random_mode": "Random-id mode has no tokenizer, so tokens are shown as their ids (#id).",
    "next.gen_run": "Generate {n} tokens",
    "next.gen_on_request": "Each new token is a step of this model that reads all its weights: {n} of them take about as "
                           "long as {gflop} GFLOP of work, so on a model this large the continuation waits for the button; "
                           "once generated, every session with the same settings sees it at once.",
}

ZH = {
    "next.title": "下一个 token：模型会说什么",
    "next.explain": "位置 t 的 logits 经过 softmax，就是模型对第 t+1 个 token 的概率。拖动位置可以看到每个前缀之后的预测，"
                    "拖动温度可以让分布变尖或变平。",
    "next.explain_random": "随机初始化的模型（比如这一个）几乎把概率平均分给全部 V 个 token（每个约 1/V），"
                           "所以在训练之前它的续写是一串乱码。",
    "next.explain_trained": "训练会把概率移到符合文本的 token 上；随机初始化的模型（侧边栏的随机初始化）"
                            "则几乎把概率平均分给全部 V 个 token（每个约 1/V）。",
    "next.position": "位置 t（预测第 t+1 个 token）",
    "next.position_help": "最后一个位置预测输入之后的那个 token，生成时用的正是它。",
    "next.k": "显示前 k 个",
    "next.temperature": "温度",
    "next.temperature_explain": "p = softmax(logits / 温度)。温度小于 1 时分布变尖（最可能的 token 概率更大），大于 1 时变平"
                                "（趋向均匀）；token 的排序不会改变，所以贪心解码不受温度影响。",
    "next.dist_title": "在位置 {pos}（{tok}）之后：下一个 token 是什么？",
    "next.chart_title": "位置 {pos} 的前 {k} 个下一个 token 概率（温度 {temp}）",
    "next.x": "概率（%）",
    "next.y": "排名与 token",
    "next.mass": "这 {k} 个 token 占了 {mass} 的概率；词表 V = {v} 中其余的 token 分享剩下的部分（均匀分布时每个为 {uniform}）。",
    "next.actual": "实际跟在后面的 token 是{tok}：概率 {p}，在 {v} 个中排第 {rank}。",
    "next.gen_title": "一小段续写",
    "next.new_tokens": "新 token 数",
    "next.greedy": "贪心（总是取最可能的 token）",
    "next.greedy_help": "关闭时：用初始化随机种子从 softmax(logits / 温度) 中采样，因此结果可以复现。",
    "next.generating": "正在生成…",
    "next.mode_greedy": "贪心",
    "next.mode_sample": "温度 {temp} 下采样，随机种子 {seed}",
    "next.gen_caption": "高亮部分：{n} 个新 token（{mode}），每一个都只由最后一个位置预测：",
    "next.stopped": "生成了 {want} 个中的 {got} 个后停止：{pe} 位置编码只覆盖前 {limit} 个位置，模型无法读取更长的序列。",
    "next.nonfinite": "logits 中含有 NaN 或 Inf，无法据此生成。请调小初始化标准差。",
    "next.random_mode": "随机 id 模式没有分词器，因此 token 显示为它们的 id（#id）。",
    "next.gen_run": "生成 {n} 个 token",
    "next.gen_on_request": "每生成一个新 token，模型都要读一遍全部权重：{n} 步的耗时约相当于 {gflop} GFLOP 的计算，"
                           "模型这么大时续写要按下按钮才生成；生成之后，设置相同的每个会话都会立即看到它。",
}
