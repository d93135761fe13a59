"""Pre-Norm vs Post-Norm page."""

EN = {
    "prepost.other_placement": "This model places its norms as {placement}, which has other norms than Pre and Post (other weights), so this page cannot compare Pre and Post on its weights. Pick a Pre-Norm or Post-Norm model (or set Placement to Pre-Norm) to compare them; the Layer norms page shows this model's own norms by depth.",
    "prepost.title": "Pre-Norm vs Post-Norm: same weights, two placements",
    "prepost.explain": "Both models below share every weight and read the same tokens; only where the norm sits "
                       "differs. At the embedding (depth 0) they agree exactly. From block 1 on, Post-Norm "
                       "re-normalises the stream to about √H after every block while Pre-Norm keeps its raw, usually "
                       "growing scale, so the cosine similarity drops and the relative difference jumps. The "
                       "gradient charts show how strongly the language-model loss pulls on each block's weights at "
                       "initialisation under each placement, and how the last block's pull changes with depth.",
    "prepost.depth.label": "Layers on this page",
    "prepost.depth.help": "Overrides the sidebar's layer count for this page only (same seed and other settings). "
                          "It follows the sidebar until you move it.",
    "prepost.depth.note": "This page uses {depth} layers; the sidebar model has {layers}.",
    "prepost.depth.fixed": "The layer count of a loaded checkpoint or a trained model cannot be changed here; this page uses its {layers} layers.",
    "prepost.computing": "Running both placements with {depth} layers (forward and backward)…",
    "prepost.same_weights": "Same weights: the {other} model is built from the current one's state dict and shares "
                            "its very tensors; the sidebar's model itself is never changed.",
    "prepost.tick.embed": "embed",
    "prepost.tick.block": "block {i}",
    "prepost.tick.final_head": "final norm + head",
    "prepost.depth_x": "depth",
    "prepost.norm_title": "Mean residual L2 norm by depth (same weights, same {n} tokens)",
    "prepost.norm_y": "L2 norm (mean over positions)",
    "prepost.sqrt_h": "√H = {value}",
    "prepost.div_title": "How far the two placements drift apart, per depth (mean over positions)",
    "prepost.cosine_title": "cosine similarity of h_pre and h_post",
    "prepost.cosine_y": "cosine similarity",
    "prepost.rel_title": "relative difference ‖h_pre − h_post‖ / ‖h_pre‖",
    "prepost.rel_y": "relative L2 difference (ratio)",
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
    "prepost.last_ratio": "At block {layers}, Post-Norm's gradient norm is {ratio}× Pre-Norm's.",
    "prepost.scaling_header": "The last block's gradient against depth (Xiong et al. 2020)",
    "prepost.xiong": "Xiong et al. 2020, “On Layer Normalization in the Transformer Architecture”, study the gradients at "
                     "initialisation. Their Theorem 1 bounds the gradient of the last layer's weights: of order d·√(ln d) "
                     "for Post-LN whatever the number of layers L, and of order d·√(ln d / L) for Pre-LN, which therefore "
                     "shrinks like 1/√L as layers are added. Their experiments (Figure 3) show Post-LN's gradient norm "
                     "growing with the layer index while Pre-LN's stays about the same across layers. Large gradients near "
                     "the output are why Post-LN needs a learning-rate warm-up, and why Pre-LN can train without one. The "
                     "chart below repeats the Theorem 1 measurement on this model; the sentences under the charts say what "
                     "this initialisation shows.",
    "prepost.scaling_random_only": "This chart rebuilds the model at other depths from its settings and seed, which a loaded "
                                   "checkpoint or a trained model cannot do: switch the model source to random init to see it.",
    "prepost.scaling_computing": "Building and differentiating {n} models of increasing depth, both placements…",
    "prepost.scaling_ref": "c / √L (c = {c}, fitted to Pre-Norm)",
    "prepost.scaling_title": "Gradient L2 norm of the last block against the number of blocks L (log–log)",
    "prepost.scaling_x": "number of blocks L (log scale)",
    "prepost.scaling_y": "gradient L2 norm of block L (log scale)",
    "prepost.scaling_measured": "Measured here (seed {seed}, L = {lo} … {hi}): a straight-line fit on this log–log chart gives "
                                "Pre-Norm ∝ L^{pre_slope} (the paper: L^−0.5) and Post-Norm ∝ L^{post_slope} (the paper: "
                                "no dependence on L). From L = {lo} to L = {hi}, Pre-Norm's last-block gradient changes "
                                "×{pre_change} (1/√L predicts ×{sqrt_change}) and Post-Norm's ×{post_change}.",
    "prepost.scaling_caption": "One model per depth L = {lo} … {hi}, each built from the sidebar's settings and seed and run "
                               "on the same input; only the last block is differentiated. L = 1 is left out: there the last "
                               "block is also the first, which under Post-Norm is the only block that reads the raw "
                               "embedding. Depths whose model would not fit the server's budget are left out.",
    "prepost.scaling_budget": "Fewer than two depths of this model fit the server's budget, so there is no scaling to show.",
    "prepost.trained_placement": "These weights were trained with {placement}: their placement is fixed by that training. The other placement below runs the very same weights, which shows how much the model depends on where its norms sit — it is not a model that was trained that way.",
    "prepost.trained_placement_short": "Trained with {placement}: the other placement runs the same weights (a what-if, never trained).",
}

ZH = {
    "prepost.other_placement": "这个模型的归一化位置是{placement}，它的归一化层与 Pre、Post 不同（权重也不同），所以本页无法在它的权重上比较 Pre 与 Post。请选择 Pre-Norm 或 Post-Norm 的模型（或把“归一化位置”设为 Pre-Norm）再比较；“逐层范数”页展示这个模型自己各层的范数。",
    "prepost.title": "Pre-Norm 与 Post-Norm：同一组权重，两种放置方式",
    "prepost.explain": "下面两个模型共享全部权重、读入相同的 token，唯一的区别是归一化放在哪里。在嵌入处（深度 0）两者完全一致。"
                       "从第 1 层起，Post-Norm 在每个 Block 之后都把残差流重新归一化到约 √H，而 Pre-Norm 保持原始的、"
                       "通常随深度增长的尺度，所以余弦相似度下降、相对差异陡增。梯度图显示在初始化时，"
                       "两种放置下语言模型损失对每个 Block 权重的梯度有多大，以及最后一层的梯度如何随深度变化。",
    "prepost.depth.label": "本页使用的层数",
    "prepost.depth.help": "只在本页覆盖侧边栏的层数（随机种子和其他设置不变）。在你拖动它之前，它跟随侧边栏。",
    "prepost.depth.note": "本页使用 {depth} 层；侧边栏的模型有 {layers} 层。",
    "prepost.depth.fixed": "已加载的检查点或训练好的模型不能在这里改层数；本页使用它的 {layers} 层。",
    "prepost.computing": "正在用 {depth} 层运行两种放置方式（前向与反向）…",
    "prepost.same_weights": "同一组权重：{other} 模型由当前模型的状态字典（state_dict）构建，直接共享同一批张量；侧边栏的模型本身从不被修改。",
    "prepost.tick.embed": "嵌入",
    "prepost.tick.block": "第 {i} 层",
    "prepost.tick.final_head": "最终归一化 + 输出头",
    "prepost.depth_x": "深度",
    "prepost.norm_title": "残差平均 L2 范数随深度的变化（同一组权重，同样的 {n} 个 token）",
    "prepost.norm_y": "L2 范数（各位置平均）",
    "prepost.sqrt_h": "√H = {value}",
    "prepost.div_title": "两种放置方式在各深度的偏离程度（各位置平均）",
    "prepost.cosine_title": "h_pre 与 h_post 的余弦相似度",
    "prepost.cosine_y": "余弦相似度",
    "prepost.rel_title": "相对差异 ‖h_pre − h_post‖ / ‖h_pre‖",
    "prepost.rel_y": "相对 L2 差异（比值）",
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
    "prepost.last_ratio": "在第 {layers} 层，Post-Norm 的梯度范数是 Pre-Norm 的 {ratio} 倍。",
    "prepost.scaling_header": "最后一层的梯度随深度的变化（Xiong 等人 2020）",
    "prepost.xiong": "Xiong 等人 2020 年的论文《论 Transformer 架构中的层归一化》研究初始化时的梯度。"
                     "其定理 1 给出最后一层权重梯度的量级：Post-Norm（论文记作 Post-LN）为 d·√(ln d)，与层数 L 无关；Pre-Norm 为 d·√(ln d / L)，"
                     "即随层数增加按 1/√L 缩小。论文的实验（图 3）显示，Post-Norm 的梯度范数随层号增大，而 Pre-Norm 在各层大致相同。"
                     "靠近输出处的梯度过大，正是 Post-Norm 需要学习率预热、而 Pre-Norm 可以不用预热的原因。"
                     "下图在当前模型上重复定理 1 的测量；各图下方的文字说明的是这一次初始化实际显示的结果。",
    "prepost.scaling_random_only": "这张图要用同样的设置和随机种子在其他深度重建模型，已加载的检查点或训练好的模型做不到："
                                   "把模型来源切换为随机初始化即可看到。",
    "prepost.scaling_computing": "正在构建 {n} 个深度递增的模型并求梯度（两种放置方式）…",
    "prepost.scaling_ref": "c / √L（c = {c}，按 Pre-Norm 拟合）",
    "prepost.scaling_title": "最后一层的梯度 L2 范数随 Block 数 L 的变化（双对数坐标）",
    "prepost.scaling_x": "Block 数 L（对数坐标）",
    "prepost.scaling_y": "第 L 层的梯度 L2 范数（对数坐标）",
    "prepost.scaling_measured": "本图实测（随机种子 {seed}，L = {lo} … {hi}）：在双对数图上做直线拟合，Pre-Norm ∝ L^{pre_slope}"
                                "（论文：L^−0.5），Post-Norm ∝ L^{post_slope}（论文：与 L 无关）。从 L = {lo} 到 L = {hi}，"
                                "Pre-Norm 最后一层的梯度变为 {pre_change} 倍（1/√L 预测 {sqrt_change} 倍），"
                                "Post-Norm 变为 {post_change} 倍。",
    "prepost.scaling_caption": "每个深度 L = {lo} … {hi} 各一个模型，都用侧边栏的设置和随机种子构建，读入同样的输入；只对最后一层求梯度。"
                               "不含 L = 1：那时最后一层也是第一层，而在 Post-Norm 下只有第一层直接读入原始嵌入。"
                               "超出服务器预算的深度不计算。",
    "prepost.scaling_budget": "这个模型在服务器预算内能计算的深度少于两个，因此无法显示随深度的变化。",
    "prepost.trained_placement": "这些权重是用 {placement} 训练出来的：归一化位置由训练决定。下面的另一种位置用的是完全相同的权重，它展示模型有多依赖归一化的位置——但它并不是用那种方式训练出来的模型。",
    "prepost.trained_placement_short": "用 {placement} 训练：另一种位置用的是同一组权重（只是假设，从未这样训练）。",
}
