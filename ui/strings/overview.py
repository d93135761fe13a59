"""Overview / block anatomy page."""

EN = {
    "overview.title": "Overview: the anatomy of a decoder block",
    "overview.explain": "A decoder block keeps the residual stream's shape [T, H] from start to end: attention mixes "
                        "information across positions, the FFN transforms each position on its own, and two residual "
                        "additions carry the input through. The parameter chart shows where the weights live; with a "
                        "tied head the output matrix costs nothing extra.",
    "overview.params_title": "Parameters per component ({total} in total)",
    "overview.params_x": "component",
    "overview.params_y": "parameters",
    "overview.tying_saved": "Tying the LM head saves {saved} parameters (V × H = {v} × {h}).",
    "overview.tying_off": "The LM head is untied: it has its own V × H = {saved} parameters.",
    "overview.shape_title": "One block, step by step (layer {layer}, {n} tokens)",
    "overview.shape_explain": "Shapes are [T, H] for one sequence; mean norm is the average L2 norm over positions.",
    "overview.layer": "Block to walk through",
    "overview.col.step": "step",
    "overview.col.name": "what",
    "overview.col.formula": "formula",
    "overview.col.hook": "activation name",
    "overview.col.shape": "shape",
    "overview.col.mean_norm": "mean L2 norm",
    "overview.col.component": "component",
    "overview.col.params": "parameters",
    "overview.col.share": "share",
    "overview.config": "Current configuration",
}

ZH = {
    "overview.title": "总览：解码器 Block 的结构",
    "overview.explain": "解码器 Block 从头到尾保持残差流形状 [T, H] 不变：注意力在位置之间交换信息，FFN 对每个位置单独变换，"
                        "两次残差相加把输入一路带下去。参数图显示权重分布在哪里；绑定 LM Head 时输出矩阵不额外占参数。",
    "overview.params_title": "各组件参数量（共 {total}）",
    "overview.params_x": "组件",
    "overview.params_y": "参数量",
    "overview.tying_saved": "权重绑定节省了 {saved} 个参数（V × H = {v} × {h}）。",
    "overview.tying_off": "LM Head 未绑定：它自己有 V × H = {saved} 个参数。",
    "overview.shape_title": "逐步拆解一个 Block（第 {layer} 层，{n} 个 token）",
    "overview.shape_explain": "单条序列的形状为 [T, H]；平均范数是各位置 L2 范数的平均值。",
    "overview.layer": "要拆解的 Block",
    "overview.col.step": "步骤",
    "overview.col.name": "计算",
    "overview.col.formula": "公式",
    "overview.col.hook": "激活名",
    "overview.col.shape": "形状",
    "overview.col.mean_norm": "平均 L2 范数",
    "overview.col.component": "组件",
    "overview.col.params": "参数量",
    "overview.col.share": "占比",
    "overview.config": "当前配置",
}
