"""Pre-Norm vs Post-Norm page."""

EN = {
    "prepost.title": "Pre-Norm vs Post-Norm: same weights, two placements",
    "prepost.explain": "Both models below share every weight and read the same tokens; only where the norm sits "
                       "differs. At the embedding (depth 0) they agree exactly. From block 1 on, Post-Norm "
                       "re-normalises the stream to about √H after every block while Pre-Norm keeps its raw, usually "
                       "growing scale, so the cosine similarity drops and the relative difference jumps. The last "
                       "chart shows how strongly the language-model loss pulls on each block's weights at "
                       "initialisation under each placement.",
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
    "prepost.trend.grow": "grows toward the output",
    "prepost.trend.shrink": "shrinks toward the output",
    "prepost.trend.flat": "roughly flat",
    "prepost.grad_trend": "Measured here, block 1 → block {layers}: Pre-Norm {pre_first} → {pre_last} ({pre_trend}); "
                          "Post-Norm {post_first} → {post_last} ({post_trend}). At block {layers}, Post-Norm's "
                          "gradient norm is {ratio} × Pre-Norm's.",
    "prepost.xiong": "Why this matters: Xiong et al. 2020, “On Layer Normalization in the Transformer Architecture”, "
                     "show that at the usual initialisation Post-Norm's gradients are largest near the output layers, "
                     "so it needs a learning-rate warm-up, while Pre-Norm's are well-behaved, which is why Pre-Norm "
                     "trains more stably. This chart is one random initialisation, not training, and it does not "
                     "always reproduce that picture: with the default settings (init std 0.02, H = 64), Pre-Norm's gradient norms stay level "
                     "or shrink gently with depth (each block's norm sees a larger residual), while Post-Norm's are "
                     "nearly flat from block 2 on and far below Pre-Norm's. Raise the init std to 0.2 to see "
                     "Post-Norm's upper blocks get larger gradients than Pre-Norm's.",
    "prepost.trained_placement": "These weights were trained with {placement}: their placement is fixed by that training. The other placement below runs the very same weights, which shows how much the model depends on where its norms sit — it is not a model that was trained that way.",
}

ZH = {
    "prepost.title": "Pre-Norm 与 Post-Norm：同一组权重，两种放置方式",
    "prepost.explain": "下面两个模型共享全部权重、读入相同的 token，唯一的区别是归一化放在哪里。在嵌入处（深度 0）两者完全一致。"
                       "从第 1 层起，Post-Norm 在每个 Block 之后都把残差流重新归一化到约 √H，而 Pre-Norm 保持原始的、"
                       "通常随深度增长的尺度，所以余弦相似度下降、相对差异陡增。最后一张图显示在初始化时，"
                       "两种放置下语言模型损失对每个 Block 权重的梯度有多大。",
    "prepost.depth.label": "本页使用的层数",
    "prepost.depth.help": "只在本页覆盖侧边栏的层数（随机种子和其他设置不变）。在你拖动它之前，它跟随侧边栏。",
    "prepost.depth.note": "本页使用 {depth} 层；侧边栏的模型有 {layers} 层。",
    "prepost.depth.fixed": "已加载的检查点或训练好的模型不能在这里改层数；本页使用它的 {layers} 层。",
    "prepost.computing": "正在用 {depth} 层运行两种放置方式（前向与反向）…",
    "prepost.same_weights": "同一组权重：{other} 模型由当前模型的 state dict 构建，直接共享同一批张量；侧边栏的模型本身从不被修改。",
    "prepost.tick.embed": "嵌入",
    "prepost.tick.block": "第 {i} 层",
    "prepost.tick.final_head": "最终归一化 + Head",
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
    "prepost.tied_head": "LM Head 与词嵌入绑定，它的梯度计入“嵌入”；此时“最终归一化 + Head”只包含最终归一化。",
    "prepost.trend.grow": "越靠近输出越大",
    "prepost.trend.shrink": "越靠近输出越小",
    "prepost.trend.flat": "大致持平",
    "prepost.grad_trend": "本图实测，第 1 层 → 第 {layers} 层：Pre-Norm {pre_first} → {pre_last}（{pre_trend}）；"
                          "Post-Norm {post_first} → {post_last}（{post_trend}）。在第 {layers} 层，"
                          "Post-Norm 的梯度范数是 Pre-Norm 的 {ratio} 倍。",
    "prepost.xiong": "为什么重要：Xiong 等人 2020 年的论文《On Layer Normalization in the Transformer Architecture》"
                     "指出，在常用的初始化下，Post-Norm 靠近输出层的梯度最大，因此需要学习率预热（warm-up）；"
                     "而 Pre-Norm 的梯度表现良好，这就是 Pre-Norm 训练更稳定的原因。本图只是一次随机初始化，不是训练过程，"
                     "也不一定重现论文中的图景：在默认设置下（初始化标准差 0.02，H = 64），Pre-Norm 的梯度范数随深度基本持平或缓慢变小"
                     "（每层的归一化看到的残差更大），而 Post-Norm 的梯度从第 2 层起几乎持平，且远低于 Pre-Norm。"
                     "把初始化标准差调到 0.2，可以看到 Post-Norm 靠上的各层梯度大于 Pre-Norm。",
    "prepost.trained_placement": "这些权重是用 {placement} 训练出来的：归一化位置由训练决定。下面的另一种位置用的是完全相同的权重，它展示模型有多依赖归一化的位置——但它并不是用那种方式训练出来的模型。",
}
