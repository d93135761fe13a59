"""Layer norms page."""

EN = {
    "norms.each_position": "each position (hover: its token)",
    "norms.title": "Layer norms: how big is the residual stream?",
    "norms.explain": "Under Pre-Norm each block adds its output to a stream that is never normalised, so the "
                     "residual norm usually grows with depth and only the final norm brings it back to about √H. "
                     "Under Post-Norm every block ends in a norm, so from block 1 on each position's norm sits flat "
                     "at RMS ≈ weight, i.e. L2 ≈ √H · weight (√H with the initial weight 1). The thin lines are "
                     "single positions and the bold line is their mean; the output of the final norm has its own "
                     "axis at the right, so its jump to √H does not flatten the growth from block to block. The bars "
                     "show how much each attention and MLP sub-layer writes into the stream.",
    "norms.tick.embed": "embed",
    "norms.tick.block": "block {i}",
    "norms.tick.final": "final norm",
    "norms.residual_title": "Residual-stream L2 norm by depth ({n} positions, {placement})",
    "norms.depth_x": "depth",
    "norms.norm_y": "L2 norm",
    "norms.mean": "mean over positions",
    "norms.sqrt_h": "√H = {value}",
    "norms.hover_position": "position {pos}: {token}",
    "norms.sublayer_title": "What each sub-layer writes: mean L2 norm of its output",
    "norms.layer_x": "block",
    "norms.attn_out": "attention output",
    "norms.mlp_out": "MLP output",
    "norms.hover_max": "max over positions",
    "norms.heatmap_title": "Residual L2 norm, depth × position",
    "norms.position_x": "position (token)",
    "norms.colorbar": "L2 norm (log colour scale)",
    "norms.heatmap_capped": "The input has {n} tokens; the heatmap shows the first {cap}.",
    "norms.summary": "Mean norm: embedding {embed}, last block {last}, after the final norm {final} (√H = {sqrt_h}).",
}

ZH = {
    "norms.each_position": "每个位置（悬停显示 token）",
    "norms.title": "逐层范数：残差流有多大？",
    "norms.explain": "Pre-Norm 下每个 Block 把输出加到一条从不归一化的残差流上，所以残差范数通常随深度增长，"
                     "只有最后的归一化把它拉回约 √H。Post-Norm 下每个 Block 都以归一化结尾，所以从第 1 层起每个位置的范数"
                     "都平稳地停在 RMS ≈ 权重，即 L2 ≈ √H · 权重（初始权重为 1 时就是 √H）。细线是单个位置，"
                     "粗线是它们的平均；最终归一化的输出画在右侧自己的坐标轴上，这样它跳到 √H 不会把逐层的增长压平。柱状图显示每个注意力和 MLP 子层向残差流写入了多大的量。",
    "norms.tick.embed": "嵌入",
    "norms.tick.block": "第 {i} 层",
    "norms.tick.final": "最终归一化",
    "norms.residual_title": "残差流 L2 范数随深度的变化（{n} 个位置，{placement}）",
    "norms.depth_x": "深度",
    "norms.norm_y": "L2 范数",
    "norms.mean": "各位置平均",
    "norms.sqrt_h": "√H = {value}",
    "norms.hover_position": "位置 {pos}：{token}",
    "norms.sublayer_title": "每个子层写入了多少：子层输出的平均 L2 范数",
    "norms.layer_x": "Block",
    "norms.attn_out": "注意力输出",
    "norms.mlp_out": "MLP 输出",
    "norms.hover_max": "各位置最大值",
    "norms.heatmap_title": "残差 L2 范数：深度 × 位置",
    "norms.position_x": "位置（token）",
    "norms.colorbar": "L2 范数（对数色标）",
    "norms.heatmap_capped": "输入共有 {n} 个 token；热力图只显示前 {cap} 个。",
    "norms.summary": "平均范数：嵌入 {embed}，最后一层 {last}，最终归一化之后 {final}（√H = {sqrt_h}）。",
}
