"""Norm placement page (formerly Pre-Norm vs Post-Norm): Pre, Post, Sandwich and OLMo-2's order on the same weights."""

EN = {
    "prepost.title": "Four norm placements, same weights",
    "prepost.explain": "The four models below share every weight and read the same tokens; only where the norms sit "
                       "differs. Pre-Norm normalises what goes into each sub-layer, x + f(norm(x)); Post-Norm the sum "
                       "after it, norm(x + f(x)); the sandwich (Gemma 2/3) both, x + norm(f(norm(x))); OLMo-2 only "
                       "the sub-layer's output, x + norm(f(x)). At the embedding (depth 0) they agree exactly. From "
                       "block 1 on, Post-Norm keeps the stream at about √H, Pre-Norm keeps its raw, usually slowly "
                       "growing scale, and the sandwich and OLMo-2 add a normalised vector of norm about √H per "
                       "sub-layer. The gradient charts show how strongly the language-model loss pulls on each "
                       "block's weights at initialisation under each placement, and how the last block's pull "
                       "changes with depth. The thick line is this model's own placement.",
    "prepost.own": "{name} · this model",
    "prepost.depth.label": "Layers on this page",
    "prepost.depth.help": "Overrides the sidebar's layer count for this page only (same seed and other settings). "
                          "It follows the sidebar until you move it.",
    "prepost.depth.note": "This page uses {depth} layers; the sidebar model has {layers}.",
    "prepost.depth.fixed": "The layer count of a loaded checkpoint or a trained model cannot be changed here; this page uses its {layers} layers.",
    "prepost.computing": "Running the four placements with {depth} layers…",
    "prepost.computing_grads": "Differentiating the four placements with {depth} layers…",
    "prepost.same_weights": "Same weights: the other three models are built from this model's state dict and share its "
                            "very tensors: the embedding, attention, feed-forward, final norm and head, and every norm "
                            "that sits in the same place (before attention, after it, before the feed-forward, after "
                            "it; Post-Norm's two norms are matched with Pre-Norm's). A norm this model has no "
                            "counterpart for starts at its init, scale 1 (it only normalises): {fresh}. The sidebar's "
                            "model itself is never changed.",
    "prepost.fresh_item": "{name} {k} of {n} per block",
    "prepost.fresh_none": "none here, every norm of the other three has a counterpart in this model",
    "prepost.sep": ", ",
    "prepost.fit_sep": "; ",
    "prepost.fresh_random": "This model is freshly initialised, so its own norms are at init too: here only the wiring differs.",
    "prepost.tick.embed": "embed",
    "prepost.tick.block": "block {i}",
    "prepost.tick.final_head": "final norm + head",
    "prepost.depth_x": "depth",
    "prepost.norm_title": "Mean residual L2 norm by depth (same weights, same {n} tokens)",
    "prepost.norm_y": "L2 norm (mean over positions)",
    "prepost.sqrt_h": "√H = {value}",
    "prepost.norm_measured": "Measured on this chart: all four start from the same embedding (mean norm {embed}); at "
                             "block {layers} the mean norm is {values}. {top}'s grows the most with depth, ×{growth} "
                             "from the embedding, {ratio}× {low}'s (×{low_growth}).",
    "prepost.norm_measured_none": "Measured on this chart: all four start from the same embedding (mean norm {embed}); "
                                  "at block {layers} the mean norm is {values}: none grows with depth. The largest, "
                                  "{top}'s, is {ratio}× the smallest, {low}'s.",
    "prepost.value": "{value} ({name})",
    "prepost.div_title": "Drift from {own}, this model's placement, by depth",
    "prepost.cosine_title": "cosine similarity",
    "prepost.cosine_y": "cosine (mean over positions)",
    "prepost.rel_title": "relative L2 difference",
    "prepost.rel_y": "ratio (mean over positions)",
    "prepost.div_measured": "At block {layers}, the hidden state closest in direction to {own}'s is {near}'s (cosine "
                            "{near_cos}, relative difference {near_rel}); the farthest is {far}'s (cosine {far_cos}, "
                            "relative difference {far_rel}).",
    "prepost.grad_title": "Gradient L2 norm of each parameter group, LM loss (labels = input ids)",
    "prepost.grad_x": "parameter group",
    "prepost.grad_y": "gradient L2 norm (log scale)",
    "prepost.need_two": "A gradient needs a loss, and the loss needs at least two tokens (position t predicts token "
                        "t + 1). The input has only one token, so there is no gradient to show: type more text or "
                        "raise the sequence length.",
    "prepost.nonfinite": "Some values are not finite (NaN or Inf): {parts}. They are left out of the charts; the init "
                         "std is probably too large.",
    "prepost.part.divergence": "hidden states",
    "prepost.part.gradients": "gradients",
    "prepost.tied_head": "The LM head is tied to the embedding, so its gradient is counted in “embed”; “final norm + "
                         "head” then holds only the final norm.",
    "prepost.measured": "Measured on this chart (blocks 1 … {layers}):",
    "prepost.last_ratio": "At block {layers}, {top}'s gradient norm is the largest, {ratio}× {low}'s, the smallest.",
    "prepost.scaling_header": "The last block's gradient against depth (Xiong et al. 2020)",
    "prepost.xiong": "Xiong et al. 2020, “On Layer Normalization in the Transformer Architecture”, study the gradients at "
                     "initialisation. Their Theorem 1 bounds the gradient of the last layer's weights: of order d·√(ln d) "
                     "for Post-LN whatever the number of layers L, and of order d·√(ln d / L) for Pre-LN, which therefore "
                     "shrinks like 1/√L as layers are added. Their experiments (Figure 3) show Post-LN's gradient norm "
                     "growing with the layer index while Pre-LN's stays about the same across layers. Large gradients near "
                     "the output are why Post-LN needs a learning-rate warm-up, and why Pre-LN can train without one. The "
                     "paper predates the sandwich and OLMo-2's order, so it predicts nothing for them. The chart below "
                     "repeats the Theorem 1 measurement on this model for all four; the sentences under the charts say "
                     "what this initialisation shows.",
    "prepost.scaling_random_only": "This chart rebuilds the model at other depths from its settings and seed, which a loaded "
                                   "checkpoint or a trained model cannot do: switch the model source to random init to see it.",
    "prepost.scaling_computing": "Building and differentiating {n} models of increasing depth, four placements each…",
    "prepost.scaling_ref": "c / √L (c = {c}, fitted to Pre-Norm)",
    "prepost.scaling_title": "Gradient L2 norm of the last block against the number of blocks L (log–log)",
    "prepost.scaling_x": "number of blocks L (log scale)",
    "prepost.scaling_y": "gradient L2 norm of block L (log scale)",
    "prepost.scaling_fit": "{name} ∝ L^{slope} (×{change})",
    "prepost.scaling_measured": "Measured here (seed {seed}, L = {lo} … {hi}), a straight-line fit on this log–log chart "
                                "and the change from L = {lo} to L = {hi}: {fits}. The paper predicts L^−0.5 for "
                                "Pre-Norm (×{sqrt_change} over this range) and no dependence on L for Post-Norm. The "
                                "largest exponent is {top}'s, the smallest {low}'s: from L = {lo} to L = {hi} their "
                                "ratio changes ×{spread}.",
    "prepost.scaling_caption": "One model per depth L = {lo} … {hi}, each built from the sidebar's settings and seed and run "
                               "on the same input under all four placements; only the last block is differentiated. L = 1 "
                               "is left out: there the last block is also the first, which under Post-Norm is the only "
                               "block that reads the raw embedding. Depths whose model would not fit the server's budget "
                               "are left out.",
    "prepost.scaling_budget": "Fewer than two depths of this model fit the server's budget, so there is no scaling to show.",
    "prepost.scaling_run": "Compute the depth sweep ({n} depths × 4 placements)",
    "prepost.scaling_on_request": "This chart builds and differentiates {n} models of {lo} to {hi} blocks, four placements "
                                  "each, so it is computed when asked for; once computed, every session with the same "
                                  "settings, seed and input sees it at once.",
    "prepost.trained_placement": "These weights were trained with {placement}: their placement is fixed by that training. The other three placements below run the very same weights (norms this model lacks at their init), which shows how much the model depends on where its norms sit — none of them is a model that was trained that way.",
    "prepost.trained_placement_short": "Trained with {placement}: the other placements run the same weights (a what-if, never trained).",
    "prepost.grads_run": "Compute the gradients (a forward and a backward per placement)",
    "prepost.grads_on_request": "The gradient chart runs a forward and a backward pass of this model for each of the four "
                                "placements (about {gflop} GFLOP), so on a model this large it is computed when asked "
                                "for; once computed, every session with the same model and input sees it at once.",
}

ZH = {
    "prepost.title": "归一化的位置：同一组权重，四种放置方式",
    "prepost.explain": "下面四个模型共享全部权重、读入相同的 token，唯一的区别是归一化放在哪里。Pre-Norm 对送进每个子层的输入做归一化，"
                       "x + f(norm(x))；Post-Norm 对子层之后的和做归一化，norm(x + f(x))；三明治（Gemma 2/3）两处都做，"
                       "x + norm(f(norm(x)))；OLMo-2 只对子层的输出做，x + norm(f(x))。在嵌入处（深度 0）四者完全一致。"
                       "从第 1 层起，Post-Norm 把残差流保持在约 √H，Pre-Norm 保持原始的、通常缓慢增长的尺度，"
                       "三明治和 OLMo-2 则每个子层加上一个范数约为 √H 的归一化向量。梯度图显示在初始化时，"
                       "各种放置下语言模型损失对每个 Block 权重的梯度有多大，以及最后一层的梯度如何随深度变化。粗线是本模型自己的放置方式。",
    "prepost.own": "{name} · 本模型",
    "prepost.depth.label": "本页使用的层数",
    "prepost.depth.help": "只在本页覆盖侧边栏的层数（随机种子和其他设置不变）。在你拖动它之前，它跟随侧边栏。",
    "prepost.depth.note": "本页使用 {depth} 层；侧边栏的模型有 {layers} 层。",
    "prepost.depth.fixed": "已加载的检查点或训练好的模型不能在这里改层数；本页使用它的 {layers} 层。",
    "prepost.computing": "正在用 {depth} 层运行四种放置方式…",
    "prepost.computing_grads": "正在用 {depth} 层对四种放置方式求梯度…",
    "prepost.same_weights": "同一组权重：另外三个模型由本模型的状态字典（state_dict）构建，直接共享同一批张量：嵌入、注意力、前馈网络、"
                            "最终归一化和输出头，以及位置相同的每个归一化层（注意力之前、之后，前馈网络之前、之后；"
                            "Post-Norm 的两个归一化层与 Pre-Norm 的对应）。本模型没有对应的归一化层从初始值开始，缩放为 1"
                            "（只做归一化）：{fresh}。侧边栏的模型本身从不被修改。",
    "prepost.fresh_item": "{name} 每层 {n} 个中的 {k} 个",
    "prepost.fresh_none": "这里没有，另外三种的每个归一化层在本模型中都有对应",
    "prepost.sep": "、",
    "prepost.fit_sep": "；",
    "prepost.fresh_random": "本模型是刚初始化的，它自己的归一化层也都是初始值：这里只有连接方式不同。",
    "prepost.tick.embed": "嵌入",
    "prepost.tick.block": "第 {i} 层",
    "prepost.tick.final_head": "最终归一化 + 输出头",
    "prepost.depth_x": "深度",
    "prepost.norm_title": "残差平均 L2 范数随深度的变化（同一组权重，同样的 {n} 个 token）",
    "prepost.norm_y": "L2 范数（各位置平均）",
    "prepost.sqrt_h": "√H = {value}",
    "prepost.norm_measured": "本图实测：四者都从同一个嵌入出发（平均范数 {embed}）；在第 {layers} 层，平均范数为 {values}。"
                             "{top} 随深度增长最多，从嵌入起增大到 {growth} 倍，是 {low}（{low_growth} 倍）的 {ratio} 倍。",
    "prepost.norm_measured_none": "本图实测：四者都从同一个嵌入出发（平均范数 {embed}）；在第 {layers} 层，平均范数为 {values}："
                                  "没有一种随深度增长。最大的 {top} 是最小的 {low} 的 {ratio} 倍。",
    "prepost.value": "{value}（{name}）",
    "prepost.div_title": "与本模型自己的放置（{own}）在各深度的偏离",
    "prepost.cosine_title": "余弦相似度",
    "prepost.cosine_y": "余弦（各位置平均）",
    "prepost.rel_title": "相对 L2 差异",
    "prepost.rel_y": "比值（各位置平均）",
    "prepost.div_measured": "在第 {layers} 层，方向上最接近 {own} 的是 {near}（余弦 {near_cos}，相对差异 {near_rel}）；"
                            "最远的是 {far}（余弦 {far_cos}，相对差异 {far_rel}）。",
    "prepost.grad_title": "各参数组的梯度 L2 范数，语言模型损失（标签 = 输入 id）",
    "prepost.grad_x": "参数组",
    "prepost.grad_y": "梯度 L2 范数（对数坐标）",
    "prepost.need_two": "梯度需要损失，而损失至少需要两个 token（位置 t 预测第 t + 1 个 token）。当前输入只有一个 token，"
                        "因此没有梯度可显示：请输入更多文字或调大序列长度。",
    "prepost.nonfinite": "有些数值不是有限数（NaN 或 Inf）：{parts}。图中已略去这些点；初始化标准差可能过大。",
    "prepost.part.divergence": "隐藏状态",
    "prepost.part.gradients": "梯度",
    "prepost.tied_head": "输出头（lm_head）与词嵌入绑定，它的梯度计入“嵌入”；此时“最终归一化 + 输出头”只包含最终归一化。",
    "prepost.measured": "本图实测（第 1 … {layers} 层）：",
    "prepost.last_ratio": "在第 {layers} 层，{top} 的梯度范数最大，是最小的 {low} 的 {ratio} 倍。",
    "prepost.scaling_header": "最后一层的梯度随深度的变化（Xiong 等人 2020）",
    "prepost.xiong": "Xiong 等人 2020 年的论文《论 Transformer 架构中的层归一化》研究初始化时的梯度。"
                     "其定理 1 给出最后一层权重梯度的量级：Post-Norm（论文记作 Post-LN）为 d·√(ln d)，与层数 L 无关；Pre-Norm 为 d·√(ln d / L)，"
                     "即随层数增加按 1/√L 缩小。论文的实验（图 3）显示，Post-Norm 的梯度范数随层号增大，而 Pre-Norm 在各层大致相同。"
                     "靠近输出处的梯度过大，正是 Post-Norm 需要学习率预热、而 Pre-Norm 可以不用预热的原因。"
                     "这篇论文早于三明治和 OLMo-2 的放置方式，对它们没有预测。"
                     "下图在当前模型上对四种放置方式重复定理 1 的测量；各图下方的文字说明的是这一次初始化实际显示的结果。",
    "prepost.scaling_random_only": "这张图要用同样的设置和随机种子在其他深度重建模型，已加载的检查点或训练好的模型做不到："
                                   "把模型来源切换为随机初始化即可看到。",
    "prepost.scaling_computing": "正在构建 {n} 个深度递增的模型并求梯度（每个四种放置方式）…",
    "prepost.scaling_ref": "c / √L（c = {c}，按 Pre-Norm 拟合）",
    "prepost.scaling_title": "最后一层的梯度 L2 范数随 Block 数 L 的变化（双对数坐标）",
    "prepost.scaling_x": "Block 数 L（对数坐标）",
    "prepost.scaling_y": "第 L 层的梯度 L2 范数（对数坐标）",
    "prepost.scaling_fit": "{name} ∝ L^{slope}（{change} 倍）",
    "prepost.scaling_measured": "本图实测（随机种子 {seed}，L = {lo} … {hi}），双对数图上的直线拟合，以及从 L = {lo} 到 L = {hi} 的变化："
                                "{fits}。论文预测 Pre-Norm ∝ L^−0.5（在这个范围内为 {sqrt_change} 倍），Post-Norm 与 L 无关。"
                                "指数最大的是 {top}，最小的是 {low}：从 L = {lo} 到 L = {hi}，两者之比变为 {spread} 倍。",
    "prepost.scaling_caption": "每个深度 L = {lo} … {hi} 各一个模型，都用侧边栏的设置和随机种子构建，以四种放置方式读入同样的输入；只对最后一层求梯度。"
                               "不含 L = 1：那时最后一层也是第一层，而在 Post-Norm 下只有第一层直接读入原始嵌入。"
                               "超出服务器预算的深度不计算。",
    "prepost.scaling_budget": "这个模型在服务器预算内能计算的深度少于两个，因此无法显示随深度的变化。",
    "prepost.scaling_run": "计算深度扫描（{n} 个深度 × 4 种放置方式）",
    "prepost.scaling_on_request": "这张图要构建 {n} 个 {lo} 到 {hi} 层的模型并求梯度（每个四种放置方式），所以按需计算；"
                                  "算好之后，设置、随机种子和输入相同的每个会话都会立即看到它。",
    "prepost.trained_placement": "这些权重是用 {placement} 训练出来的：归一化位置由训练决定。下面另外三种放置方式用的是完全相同的权重（本模型没有的归一化层取初始值），它展示模型有多依赖归一化的位置——但它们都不是用那种方式训练出来的模型。",
    "prepost.trained_placement_short": "用 {placement} 训练：其他放置方式用的是同一组权重（只是假设，从未这样训练）。",
    "prepost.grads_run": "计算梯度（每种放置方式一次前向和一次反向）",
    "prepost.grads_on_request": "梯度图要对四种放置方式各做一次前向和反向传播（约 {gflop} GFLOP），模型这么大时按需计算；"
                                "算好之后，模型和输入相同的每个会话都会立即看到它。",
}
