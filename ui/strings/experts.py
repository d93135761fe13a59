"""Experts (mixture-of-experts) page: router probabilities per token, load per expert."""

EN = {
    "experts.title": "Experts (MoE): where the router sends each token",
    "experts.explain": "In a mixture-of-experts block the FFN is replaced by E expert FFNs and a router: a linear "
                       "layer that gives every token one score per expert. A softmax turns the scores into "
                       "probabilities, and the token goes only through the k experts with the highest ones, their "
                       "outputs weighted by those probabilities. So a token uses k of the E experts' weights: the "
                       "model has many parameters but each token computes with few. Look for tokens that agree on "
                       "an expert, and for experts that get far more than their even share k/E of the tokens.",
    "experts.dense": "This model has a dense FFN: one feed-forward network that every token goes through, so there "
                     "is no router and nothing to route. A mixture-of-experts model replaces it by several expert "
                     "FFNs and a router that picks k of them per token.",
    "experts.use_preset": "Switch to the MiniMind-MoE preset (4 experts, top-2)",
    "experts.layer": "Block",
    "experts.layer_help": "The block whose router is shown (numbered from 1).",
    "experts.start": "First token shown",
    "experts.start_help": "The map shows {n} tokens at a time, so every row and its numbers stay readable; move the window along the text.",
    "experts.shown": "Shown: tokens {p0}–{p1} of positions 0–{T}.",
    "experts.heat_title": "Router probabilities in block {layer} ({n} experts, top {k} per token)",
    "experts.heat_x": "expert (boxed: the {k} each token is routed to)",
    "experts.heat_y": "position: token",
    "experts.colorbar": "probability",
    "experts.chosen": "chosen (top-{k})",
    "experts.fig.hover": "%{customdata[0]} → expert %{x}: probability %{z:.3f}<br>rank %{customdata[2]}, "
                         "weight %{customdata[1]}",
    "experts.fig.load_hover": "expert %{x}: %{y:.1f}% of the tokens (%{customdata} routed)",
    "experts.heat_caption": "Each row is the router's softmax over the {n} experts (it sums to 1); the boxes mark the "
                            "{k} experts the token is routed to. Their outputs are weighted by {how}.",
    "experts.how.renorm": "their probabilities renormalised to sum to 1",
    "experts.how.raw": "their probabilities as they are",
    "experts.shared": "Besides the routed experts, every token also goes through one shared expert (width {width}), "
                      "scaled by a learned gate; it has no column here.",
    "experts.load_heading": "Load per expert",
    "experts.scope.label": "Count the tokens of",
    "experts.scope.layer": "block {layer}",
    "experts.scope.all": "all {n} blocks",
    "experts.load_title": "Share of the tokens routed to each expert ({scope})",
    "experts.load_x": "expert (dashed line: the even share k/E = {k}/{n} = {share})",
    "experts.load_y": "share of the tokens",
    "experts.uniform": "even share k/E = {k}/{n} = {share}",
    "experts.sentence": "Expert {most} gets the most tokens: {most_share} of them, {most_ratio}× its even share of "
                        "{uniform}; expert {least} gets the fewest: {least_share} ({least_ratio}×). The shares add "
                        "up to k = {k}, since every token goes to {k} experts.",
    "experts.even": "Every expert gets exactly its even share: {uniform} of the tokens.",
    "experts.idle": "{n} of the {total} experts get no token at all: their weights are not used on this input.",
    "experts.aux": "The load-balancing loss that training adds to keep the experts evenly used "
                   "(E · Σ share × mean probability, Switch Transformer) is {aux} here; it is {k} when the load is "
                   "perfectly even.",
    "experts.params": "Parameters: {active} of {total} are used per token ({share}); the routed experts hold "
                      "{experts} of them.",
}

ZH = {
    "experts.title": "专家路由：路由器把每个 token 送往哪里",
    "experts.explain": "在混合专家 Block 中，FFN 被换成 E 个专家 FFN 和一个路由器：路由器是一个线性层，为每个 token 给每个专家"
                       "打一个分。softmax 把分数变成概率，token 只经过概率最高的 k 个专家，它们的输出按这些概率加权。因此每个 "
                       "token 只用到 E 个专家中 k 个的权重：模型参数很多，但每个 token 的计算量很少。留意哪些 token 选中了同一个"
                       "专家，以及哪些专家得到的 token 远多于均匀份额 k/E。",
    "experts.dense": "这个模型的 FFN 是稠密的：每个 token 都经过同一个前馈网络，没有路由器，也就没有可展示的路由。混合专家模型"
                     "把它换成多个专家 FFN，再由路由器为每个 token 挑选其中 k 个。",
    "experts.use_preset": "切换到 MiniMind 混合专家预设（4 个专家，每个 token 选 2 个）",
    "experts.layer": "Block",
    "experts.layer_help": "显示哪一个 Block 的路由器（从 1 开始编号）。",
    "experts.start": "显示的第一个 token",
    "experts.start_help": "热力图一次显示 {n} 个 token，每一行和其中的数字都清晰可读；移动窗口即可沿文本查看。",
    "experts.shown": "当前显示：token {p0}–{p1}（位置共 0–{T}）。",
    "experts.heat_title": "第 {layer} 个 Block 的路由概率（{n} 个专家，每个 token 选 {k} 个）",
    "experts.heat_x": "专家（方框：每个 token 被送往的 {k} 个）",
    "experts.heat_y": "位置：token",
    "experts.colorbar": "概率",
    "experts.chosen": "被选中（前 {k} 个）",
    "experts.fig.hover": "%{customdata[0]} → 专家 %{x}：概率 %{z:.3f}<br>排名 %{customdata[2]}，权重 %{customdata[1]}",
    "experts.fig.load_hover": "专家 %{x}：%{y:.1f}% 的 token（共 %{customdata} 个）",
    "experts.heat_caption": "每一行是路由器在 {n} 个专家上的 softmax（和为 1）；方框标出 token 被送往的 {k} 个专家。它们的输出按"
                            "{how}加权。",
    "experts.how.renorm": "重新归一化（和为 1）后的概率",
    "experts.how.raw": "原始概率",
    "experts.shared": "除了被路由的专家，每个 token 还会经过一个共享专家（宽度 {width}），由一个可学习的门控缩放；图中没有它的列。",
    "experts.load_heading": "每个专家的负载",
    "experts.scope.label": "统计范围",
    "experts.scope.layer": "第 {layer} 个 Block",
    "experts.scope.all": "全部 {n} 个 Block",
    "experts.load_title": "送往每个专家的 token 占比（{scope}）",
    "experts.load_x": "专家（虚线：均匀份额 k/E = {k}/{n} = {share}）",
    "experts.load_y": "token 占比",
    "experts.uniform": "均匀份额 k/E = {k}/{n} = {share}",
    "experts.sentence": "专家 {most} 得到的 token 最多：占 {most_share}，是均匀份额 {uniform} 的 {most_ratio} 倍；专家 {least} "
                        "得到的最少：占 {least_share}（{least_ratio} 倍）。因为每个 token 都送往 {k} 个专家，各占比之和为 "
                        "k = {k}。",
    "experts.even": "每个专家恰好得到均匀份额：{uniform} 的 token。",
    "experts.idle": "{total} 个专家中有 {n} 个没有得到任何 token：在这段输入上它们的权重没有被用到。",
    "experts.aux": "训练时为了让专家负载均衡而加上的辅助损失（E · Σ 占比 × 平均概率）在这里是 {aux}；负载完全均匀时它等于 "
                   "{k}。",
    "experts.params": "参数量：每个 token 用到 {total} 个中的 {active} 个（{share}）；被路由的专家占其中 {experts} 个。",
}
