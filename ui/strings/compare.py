"""Compare side by side: the sidebar's box, the compared charts and their sentences."""

EN = {
    "compare.side": "{side}",
    "compare.start": "Compare",
    "compare.start_help": "Copy this view to a second side, B, and draw A and B side by side: the sidebar then "
                          "edits B. Every page that draws the model draws both sides, except Norm placement, "
                          "Follow a token and the Training lab.",
    "compare.edits": "The sidebar edits side",
    "compare.swap": "⇄ Swap",
    "compare.swap_help": "A and B trade places.",
    "compare.stop": "Stop comparing",
    "compare.pages_note": "Comparing A and B: the sidebar shows {side}. A page that draws both sides titles its "
                          "charts “A · …” and “B · …”; the other pages draw {side}.",
    "compare.presets": "Comparison presets",
    "compare.preset.norm": "LayerNorm (A) vs RMSNorm (B)",
    "compare.preset.gqa": "MHA (A) vs GQA (B), same width",
    "compare.preset.heads": "4 heads (A) vs 8 heads (B), same width",
    "compare.preset.rope": "Learned positions (A) vs RoPE (B)",
    "compare.preset.repeat": "The text (A) vs the text repeated (B)",
    "compare.preset.trained": "Random init (A) vs after the Training lab (B)",
    "compare.preset.models": "SmolLM2 (A) vs the Tang-poem model (B), one Chinese line",
    "compare.preset.translation": "English (A) vs its Chinese translation (B) on SmolLM2",
    "compare.preset_needs_run": "Train a model in the Training lab first: B is the model it trains.",
    "compare.preset_needs_model": "The model {name} is not installed on this server.",
    "compare.side_note": "Side {side}: {note}",
    "compare.side_failed": "Side {side} cannot be built: {error}",
    "compare.side_empty": "Side {side}'s text gives no tokens: only the sidebar's side is drawn.",
    "compare.title": "{side} · {title}",
    "compare.no_head": "Side {side} has no layer {layer} head {head} (it has {L} layers of {nh} heads).",
    "compare.diff_title": "A − B: {stage}, layer {layer} head {head}",
    "compare.diff_unit": "A − B",
    "compare.diff_none": "No difference panel: a side lacks this head.",
    "compare.diff_cut": "The difference covers positions 0–{last}, the ones both sides have (A {ta} tokens, B {tb}).",
    "compare.other_tokens": "The two sides read different tokens: the difference compares position with position.",
    "compare.attn_sentence": "The largest attention change is layer {layer} head {head}, query {q} → key {k}: "
                             "{a} in A → {b} in B.",
    "compare.attn_same": "Every attention weight both sides have is the same in A and B.",
    "compare.attn_close": "The attention weights both sides have agree to the digits shown: the largest change is "
                          "{delta} (layer {layer} head {head}, query {q} → key {k}).",
    "compare.unaligned.layers": "A has {a} layers, B {b}: the layers past {n} have no counterpart.",
    "compare.unaligned.heads": "A has {a} heads per layer, B {b}: heads past {n} have no counterpart.",
    "compare.unaligned.tokens": "A reads {a} tokens, B {b}: positions past {last} have no counterpart.",
    "compare.unaligned.vocab": "A's vocabulary has {a} tokens, B's {b}: the same text gives other tokens.",
    "compare.below": "Below: side {side} only (the sidebar's).",
    "compare.one_side_page": "Comparing: this page draws side {side} only (the sidebar's).",
    "compare.norms_ratio_title": "B / A: mean residual norm by depth",
    "compare.ratio": "B / A",
    "compare.norms_sentence": "B's residual norm after the last block is {ratio}× A's ({a} in A after block {la}, "
                              "{b} in B after block {lb}).",
}

ZH = {
    "compare.side": "{side}",
    "compare.start": "对比",
    "compare.start_help": "把当前视图复制为第二方 B，A 与 B 并排绘制；之后侧边栏编辑 B。除归一化位置对比、跟踪一个 token 和训练实验室外，每个绘制模型的页面都会绘制双方。",
    "compare.edits": "侧边栏编辑的一方",
    "compare.swap": "⇄ 交换",
    "compare.swap_help": "A 与 B 互换位置。",
    "compare.stop": "停止对比",
    "compare.pages_note": "正在对比 A 与 B：侧边栏显示 {side}。绘制双方的页面在图表标题前标出 A · 与 B ·，其他页面只绘制 {side}。",
    "compare.presets": "对比预设",
    "compare.preset.norm": "LayerNorm（A）对 RMSNorm（B）",
    "compare.preset.gqa": "MHA（A）对 GQA（B），宽度相同",
    "compare.preset.heads": "4 个头（A）对 8 个头（B），宽度相同",
    "compare.preset.rope": "可学习位置（A）对 RoPE（B）",
    "compare.preset.repeat": "原文（A）对重复一遍的原文（B）",
    "compare.preset.trained": "随机初始化（A）对 训练实验室训练之后（B）",
    "compare.preset.models": "SmolLM2（A）对 唐诗模型（B），同一句中文",
    "compare.preset.translation": "英文（A）对 它的中文译文（B），都在 SmolLM2 上",
    "compare.preset_needs_run": "请先在训练实验室训练一个模型：B 就是它训练出的模型。",
    "compare.preset_needs_model": "这台服务器没有安装模型 {name}。",
    "compare.side_note": "{side} 方：{note}",
    "compare.side_failed": "{side} 方无法构建：{error}",
    "compare.side_empty": "{side} 方的文本没有切出任何 token：只绘制侧边栏的一方。",
    "compare.title": "{side} · {title}",
    "compare.no_head": "{side} 方没有第 {layer} 层第 {head} 个头（它有 {L} 层，每层 {nh} 个头）。",
    "compare.diff_title": "A − B：{stage}，第 {layer} 层第 {head} 个头",
    "compare.diff_unit": "A − B",
    "compare.diff_none": "没有差值图：有一方缺少这个头。",
    "compare.diff_cut": "差值覆盖位置 0–{last}，即双方都有的位置（A 有 {ta} 个 token，B 有 {tb} 个）。",
    "compare.other_tokens": "双方读到的 token 不同：差值按位置逐一相减。",
    "compare.attn_sentence": "注意力变化最大的是第 {layer} 层第 {head} 个头，查询 {q} → 键 {k}：A 中为 {a}，B 中为 {b}。",
    "compare.attn_same": "双方共有的每个注意力权重在 A 与 B 中都相同。",
    "compare.attn_close": "双方共有的注意力权重在显示的位数内一致：最大变化为 {delta}（第 {layer} 层第 {head} 个头，查询 {q} → 键 {k}）。",
    "compare.unaligned.layers": "A 有 {a} 层，B 有 {b} 层：第 {n} 层之后的层没有对应。",
    "compare.unaligned.heads": "A 每层 {a} 个头，B 每层 {b} 个：第 {n} 个之后的头没有对应。",
    "compare.unaligned.tokens": "A 读 {a} 个 token，B 读 {b} 个：位置 {last} 之后没有对应。",
    "compare.unaligned.vocab": "A 的词表有 {a} 个 token，B 的有 {b} 个：同一段文本切出的 token 不同。",
    "compare.below": "以下：只有 {side} 方（侧边栏的一方）。",
    "compare.one_side_page": "正在对比：本页只绘制 {side} 方（侧边栏显示的一方）。",
    "compare.norms_ratio_title": "B / A：各深度残差流平均范数之比",
    "compare.ratio": "B / A",
    "compare.norms_sentence": "最后一层之后，B 的残差流范数是 A 的 {ratio} 倍（A 在第 {la} 层之后为 {a}，B 在第 {lb} 层之后为 {b}）。",
}

# ---- loss, next token, overview, lens
EN.update({
    "compare.loss_title": "ℓ_t / N by position (N = {n})",
    "compare.loss_tokens": "{inp} → {tgt}",
    "compare.loss_where": "position {p} ({tokens})",
    "compare.loss_where_two": "position {p} (A: {a}; B: {b})",
    "compare.loss_sentence": "B's mean loss is {ratio}× A's ({b} vs {a} nats).",
    "compare.loss_none": "No mean loss to compare: a side has no supervised target.",
    "compare.loss_change": "The largest change is at {where}: {a} nats in A → {b} in B.",
    "compare.loss_ratio_title": "B / A: the loss of each position both sides predict",
    "compare.loss_ratio_y": "B / A (loss)",
    "compare.loss_cut": "The ratio covers positions 0–{last}, the ones both sides predict (A {ta}, B {tb}).",
    "compare.next_title": "Top {k} after position {pos} (temperature {temp})",
    "compare.next_sentence": "A's top next token is {ta} ({pa}), B's is {tb} ({pb}).",
    "compare.next_positions": "A predicts after its position {a}, B after its position {b} (each text's last).",
    "compare.next_change": "The largest change among the top tokens is {tok}: {a} in A → {b} in B.",
    "compare.next_close": "The top tokens' probabilities agree to the digits shown: the largest change is {delta} "
                          "percentage points ({tok}).",
    "compare.next_diff_y": "token",
    "compare.next_by_text": "The two sides have different vocabularies: their top tokens are compared by text, and "
                            "{n} texts are in both lists (A's {ka}, B's {kb}).",
    "compare.next_diff_title": "A − B: probability of the top tokens ({n})",
    "compare.next_diff_x": "A − B (percentage points)",
    "compare.params_sentence": "B has {ratio}× A's parameters ({b} vs {a}).",
    "compare.params_change": "The largest difference is {part}: {a} in A → {b} in B.",
    "compare.lens_title": "Lens: top token per depth (last positions)",
    "compare.lens_side_a": "At the last position A's final prediction {tok} becomes and stays the lens's top token "
                           "at {depth} of {L} (relative depth {rel});",
    "compare.lens_side_b": "B's {tok} at {depth} of {L} (relative depth {rel}).",
    "compare.lens_rel_title": "p(final) at each side's last position by relative depth (log scale)",
    "compare.lens_rel_x": "relative depth (0 = embedding, 100% = last block)",
    "compare.gen_cache_title": "KV cache: {s} positions a layer",
    "compare.gen_sentence": "After {n} decode steps in A and {m} in B, A's KV cache holds {a} bytes and B's {b} "
                            "({ratio}× A's).",
    "compare.gen_shared": "The two continuations agree on their first {k} of {n} new tokens.",
})
ZH.update({
    "compare.loss_title": "各位置的 ℓ_t / N（N = {n}）",
    "compare.loss_tokens": "{inp} → {tgt}",
    "compare.loss_where": "位置 {p}（{tokens}）",
    "compare.loss_where_two": "位置 {p}（A：{a}；B：{b}）",
    "compare.loss_sentence": "B 的平均损失是 A 的 {ratio} 倍（{b} 对 {a} nats）。",
    "compare.loss_none": "无法比较平均损失：有一方没有受监督的目标。",
    "compare.loss_change": "变化最大的是{where}：A 中 {a} nats → B 中 {b}。",
    "compare.loss_ratio_title": "B / A：双方都预测的每个位置的损失之比",
    "compare.loss_ratio_y": "B / A（损失）",
    "compare.loss_cut": "比值覆盖位置 0–{last}，即双方都预测的位置（A {ta} 个，B {tb} 个）。",
    "compare.next_title": "位置 {pos} 之后的前 {k} 个（温度 {temp}）",
    "compare.next_sentence": "A 最可能的下一个 token 是 {ta}（{pa}），B 的是 {tb}（{pb}）。",
    "compare.next_positions": "A 在它的位置 {a} 之后预测，B 在它的位置 {b} 之后预测（各自文本的最后一个）。",
    "compare.next_change": "前几名 token 中变化最大的是 {tok}：A 中 {a} → B 中 {b}。",
    "compare.next_close": "前几名 token 的概率在显示的位数内一致：最大变化为 {delta} 个百分点（{tok}）。",
    "compare.next_diff_y": "token",
    "compare.next_by_text": "双方的词表不同：前几名 token 按文本比较，有 {n} 个文本同时出现在两个列表中（A 有 {ka} 个，B 有 {kb} 个）。",
    "compare.next_diff_title": "A − B：前几名 token 的概率（{n} 个）",
    "compare.next_diff_x": "A − B（百分点）",
    "compare.params_sentence": "B 的参数量是 A 的 {ratio} 倍（{b} 对 {a}）。",
    "compare.params_change": "差别最大的是{part}：A 中 {a} → B 中 {b}。",
    "compare.lens_title": "透镜：每个深度的第一名 token（最后几个位置）",
    "compare.lens_side_a": "在最后一个位置，A 的最终预测 {tok} 从 {depth}（共 {L} 层，相对深度 {rel}）起成为并保持透镜的第一名；",
    "compare.lens_side_b": "B 的 {tok} 从 {depth}（共 {L} 层，相对深度 {rel}）起。",
    "compare.lens_rel_title": "双方最后一个位置的 p(最终)，按相对深度（对数刻度）",
    "compare.lens_rel_x": "相对深度（0 = 嵌入，100% = 最后一层）",
    "compare.gen_cache_title": "KV 缓存：每层 {s} 个位置",
    "compare.gen_sentence": "A 解码 {n} 步、B 解码 {m} 步之后，A 的 KV 缓存占 {a} 字节，B 的占 {b} 字节（A 的 {ratio} 倍）。",
    "compare.gen_shared": "两段续写的前 {k} 个新 token 相同（共 {n} 个）。",
})

# ---- head roles, rope, interventions, experts
EN.update({
    "compare.grid_change": "{what} changes most at {where}: {a} in A → {b} in B.",
    "compare.grid_close": "{what} agrees between A and B to the digits shown: the largest change is {delta}, at "
                          "{where}.",
    "compare.grid_at": "layer {layer} head {head}",
    "compare.grid_at_depth": "head {head} of A's layer {la} and B's layer {lb} (the same relative depth)",
    "compare.grid_same": "{what} is the same in A and B at every head both sides have.",
    "compare.roles_what": "The {score} score",
    "compare.roles_top": "Highest in A: layer {la} head {ha} ({a}); in B: layer {lb} head {hb} ({b}).",
    "compare.roles_top_entropy": "Most focused (lowest entropy) in A: layer {la} head {ha} ({a} nats); in B: layer "
                                 "{lb} head {hb} ({b} nats).",
    "compare.roles_missing": "Side {side} has no {score} score: its text is one token long.",
    "compare.grid_heads": "A has {a} heads per layer, B {b}: heads of layers this different have no order in "
                          "common, so there is no A − B map.",
    "compare.grid_depth": "A has {a} layers, B {b}: the A − B map pairs each layer of the shallower side with the "
                          "deeper side's layer at the same relative depth (rows: A's layer / B's).",
    "compare.roles_diff_title": "A − B per head: {score}",
    "compare.roles_map_title": "{score} score of every head",
    "compare.roles_map_title_entropy": "Mean attention entropy of every head, nats",
    "compare.layer_pair": "layer (A / B)",
    "compare.col.layer_a": "layer (A)",
    "compare.col.layer_b": "layer (B)",
    "compare.col.head": "head",
})
ZH.update({
    "compare.grid_change": "{what}变化最大的是{where}：A 中为 {a}，B 中为 {b}。",
    "compare.grid_close": "{what}在 A 与 B 中在显示的位数内一致：最大变化为 {delta}，在{where}。",
    "compare.grid_at": "第 {layer} 层第 {head} 个头",
    "compare.grid_at_depth": "第 {head} 个头（A 第 {la} 层、B 第 {lb} 层，相对深度相同）",
    "compare.grid_same": "在双方共有的每个头上，{what}在 A 与 B 中都相同。",
    "compare.roles_what": "{score}分数",
    "compare.roles_top": "A 中最高：第 {la} 层第 {ha} 个头（{a}）；B 中最高：第 {lb} 层第 {hb} 个头（{b}）。",
    "compare.roles_top_entropy": "A 中最集中（熵最低）：第 {la} 层第 {ha} 个头（{a} 奈特）；B 中：第 {lb} 层第 {hb} 个头"
                                 "（{b} 奈特）。",
    "compare.roles_missing": "{side} 方没有{score}分数：它的文本只有一个 token。",
    "compare.grid_heads": "A 每层 {a} 个头，B 每层 {b} 个：宽度不同的层里，头的编号没有共同的顺序，所以没有 A − B 图。",
    "compare.grid_depth": "A 有 {a} 层，B 有 {b} 层：A − B 图把较浅一方的每一层与较深一方相对深度相同的层配对"
                          "（行：A 的层 / B 的层）。",
    "compare.roles_diff_title": "A − B（每个头）：{score}",
    "compare.roles_map_title": "每个头的{score}分数",
    "compare.roles_map_title_entropy": "每个头的平均注意力熵（奈特）",
    "compare.layer_pair": "层（A / B）",
    "compare.col.layer_a": "层（A）",
    "compare.col.layer_b": "层（B）",
    "compare.col.head": "头",
})
EN.update({
    "compare.rope_one_side": "Comparing: this chart draws side {side} only (the sidebar's); the wavelengths and the "
                             "real head below draw both sides.",
    "compare.rope_not_used": "Side {side} does not use RoPE (positions: {position}): its chart shows base θ = {theta} "
                             "at its head width d = {d}, as its single view does.",
    "compare.rope_waves": "The slowest plane turns once every {sa} tokens in A (base θ = {ta}, {ha} planes) and every "
                          "{sb} in B (θ = {tb}, {hb} planes): {ratio}× A's. Planes that turn at least once within the "
                          "context: {ca} of {ha} in A ({na} tokens), {cb} of {hb} in B ({nb} tokens).",
    "compare.rope_planes": "A has {a} planes, B {b} (other head widths): plane i of one is not plane i of the other, "
                           "so there is no plane-by-plane ratio.",
    "compare.rope_ratio_title": "B / A: wavelength of each plane",
    "compare.rope_head_none": "Side {side} does not use RoPE (positions: {position}): its q and k carry no rotation "
                              "to plot against the distance.",
    "compare.rope_head_sentence": "Layer {layer}, head {head}: the mean score at distance 0 is {a0} in A and {b0} in "
                                  "B; it is highest at distance {da} in A ({va}) and {db} in B ({vb}).",
    "compare.rope_diff_title": "A − B: layer {layer}, head {head}'s mean score by distance",
})
ZH.update({
    "compare.rope_one_side": "对比中：这张图只绘制 {side} 方（侧边栏的一方）；下面的波长图和真实头的图绘制双方。",
    "compare.rope_not_used": "{side} 方不使用 RoPE（位置编码：{position}）：它的图按基数 θ = {theta}、它的头宽 d = {d} "
                             "绘制，与它的单方视图相同。",
    "compare.rope_waves": "最慢的平面在 A 中每 {sa} 个 token 转一圈（基数 θ = {ta}，{ha} 个平面），在 B 中每 {sb} 个"
                          "（θ = {tb}，{hb} 个平面）：是 A 的 {ratio} 倍。在上下文内至少转一圈的平面：A 有 {ca}/{ha} 个"
                          "（{na} 个 token），B 有 {cb}/{hb} 个（{nb} 个 token）。",
    "compare.rope_planes": "A 有 {a} 个平面，B 有 {b} 个（头宽不同）：一方的第 i 个平面不是另一方的第 i 个平面，所以没有逐平面的比值。",
    "compare.rope_ratio_title": "B / A：每个平面的波长之比",
    "compare.rope_head_none": "{side} 方不使用 RoPE（位置编码：{position}）：它的 q 和 k 没有旋转，无法按距离作图。",
    "compare.rope_head_sentence": "第 {layer} 层第 {head} 个头：距离 0 处的平均分数在 A 中为 {a0}，在 B 中为 {b0}；"
                                  "A 在距离 {da} 处最高（{va}），B 在距离 {db} 处最高（{vb}）。",
    "compare.rope_diff_title": "A − B：第 {layer} 层第 {head} 个头按距离的平均分数",
})
EN.update({
    "compare.interv_map_title": "Loss rise on the second copy when one head is removed, nats",
    "compare.interv_waiting": "Side {side}'s sweep on its model needs a background run first: edit side {side} in "
                              "the sidebar, run it there, then both sides are drawn here. Below: side {edited} only.",
    "compare.interv_top": "Removing one head raises the loss most at layer {la} head {ha} in A ({ra} nats over "
                          "{ba}) and at layer {lb} head {hb} in B ({rb} over {bb}).",
    "compare.interv_what": "The loss rise",
    "compare.interv_diff_title": "A − B: loss rise when each head is removed, nats",
    "compare.interv_pairs_one_side": "Comparing: the residual patching map draws both sides; the per-head map and "
                                     "the cell below draw side {side} only (the sidebar's).",
    "compare.interv_res_title": "Logit difference restored by patching the clean residual stream",
    "compare.interv_res_best": "Patching restores most at layer {la} position {pa} in A ({va}) and at layer {lb} "
                               "position {pb} in B ({vb}).",
    "compare.interv_res_none": "Side {side}: no patch restores anything (its prompts leave no gap between the answers).",
    "compare.interv_res_what": "The restored fraction",
    "compare.interv_res_diff_title": "A − B: restored fraction per layer and position",
    "compare.grid_at_pos": "layer {layer} position {head}",
    "compare.grid_at_depth_pos": "position {head} of A's layer {la} and B's layer {lb} (the same relative depth)",
    "compare.grid_positions": "A's prompts have {a} tokens, B's {b}: positions have no counterpart one by one, so "
                              "there is no A − B map.",
})
ZH.update({
    "compare.interv_map_title": "删掉一个头后第二遍损失的增加量（奈特）",
    "compare.interv_waiting": "{side} 方的模型需要先在后台运行扫描：在侧边栏编辑 {side} 方并在那里运行，之后这里会绘制双方。"
                              "以下：只有 {edited} 方。",
    "compare.interv_top": "删掉一个头使损失上升最多的：A 是第 {la} 层第 {ha} 个头（在 {ba} 的基础上 {ra} 奈特），"
                          "B 是第 {lb} 层第 {hb} 个头（在 {bb} 的基础上 {rb}）。",
    "compare.interv_what": "损失的上升",
    "compare.interv_diff_title": "A − B：删掉每个头后损失的上升（奈特）",
    "compare.interv_pairs_one_side": "对比中：残差修补图绘制双方；逐头图和下面的格子只绘制 {side} 方（侧边栏的一方）。",
    "compare.interv_res_title": "修补干净运行的残差流后恢复的 logit 差",
    "compare.interv_res_best": "修补恢复最多的位置：A 是第 {la} 层位置 {pa}（{va}），B 是第 {lb} 层位置 {pb}（{vb}）。",
    "compare.interv_res_none": "{side} 方：没有任何修补能恢复（它的两个提示词在两个答案之间没有差距）。",
    "compare.interv_res_what": "恢复的比例",
    "compare.interv_res_diff_title": "A − B：每层每个位置恢复的比例",
    "compare.grid_at_pos": "第 {layer} 层位置 {head}",
    "compare.grid_at_depth_pos": "位置 {head}（A 第 {la} 层、B 第 {lb} 层，相对深度相同）",
    "compare.grid_positions": "A 的提示词有 {a} 个 token，B 的有 {b} 个：位置无法一一对应，所以没有 A − B 图。",
})
EN.update({
    "compare.experts_one_side": "Comparing: the router map draws side {side} only (the sidebar's); the load per "
                                "expert below draws both sides.",
    "compare.experts_dense": "Side {side} has a dense FFN: no router, so no load per expert.",
    "compare.experts_no_block": "Side {side} has {n} mixture-of-experts blocks: none is its MoE block number {shown}.",
    "compare.experts_sentence": "The busiest expert gets {ma} of the tokens in A (expert {ea}, {ra}× the even share "
                                "{ua}) and {mb} in B (expert {eb}, {rb}× the even share {ub}); the load-balancing "
                                "loss is {xa} in A and {xb} in B.",
    "compare.experts_counts": "A has {a} experts, B {b}: expert i of one is not expert i of the other, so there is "
                              "no A − B chart.",
    "compare.experts_diff_title": "A − B: share of the tokens routed to each expert",
    "compare.experts_diff_y": "A − B (percentage points)",
    "compare.col.expert": "expert",
})
ZH.update({
    "compare.experts_one_side": "对比中：路由热力图只绘制 {side} 方（侧边栏的一方）；下面的各专家负载绘制双方。",
    "compare.experts_dense": "{side} 方是稠密 FFN：没有路由器，也就没有各专家的负载。",
    "compare.experts_no_block": "{side} 方有 {n} 个混合专家块：没有第 {shown} 个 MoE 块。",
    "compare.experts_sentence": "最忙的专家在 A 中得到 {ma} 的 token（专家 {ea}，是均匀份额 {ua} 的 {ra} 倍），在 B 中得到 "
                                "{mb}（专家 {eb}，是均匀份额 {ub} 的 {rb} 倍）；负载均衡损失 A 为 {xa}，B 为 {xb}。",
    "compare.experts_counts": "A 有 {a} 个专家，B 有 {b} 个：一方的第 i 个专家不是另一方的第 i 个专家，所以没有 A − B 图。",
    "compare.experts_diff_title": "A − B：路由到每个专家的 token 份额",
    "compare.experts_diff_y": "A − B（百分点）",
    "compare.col.expert": "专家",
})
