"""Loss & masking page (namespace ``loss``)."""

EN = {
    "loss.title": "Loss & masking: which tokens are trained on",
    "loss.explain": "A causal LM is trained to predict token t+1 from the tokens up to t, so T tokens give T−1 "
                    "targets. Setting a label to −100 removes that target: it gets no loss and no longer counts in "
                    "the denominator N, so the mean is taken over supervised targets only. This is how chat "
                    "fine-tuning trains on the answer but not on the prompt.",
    "loss.too_short": "The loss needs at least two tokens (one input and one target to predict). Type a longer text "
                      "or raise the sequence length in the sidebar.",
    "loss.mask_title": "Choose the supervised targets",
    "loss.prompt_len": "Prompt length (first N tokens masked)",
    "loss.prompt_help": "labels[:N] = −100: the prompt's tokens are never targets. N = T masks everything.",
    "loss.masked": "Also mask single tokens",
    "loss.masked_help": "Each chosen token's label becomes −100, so the row that predicts it drops out.",
    "loss.masked_placeholder": "pick tokens to mask",
    "loss.masked_dropped": "Masked positions {dropped} no longer exist in this input and were removed.",
    "loss.labels_caption": "labels (input ids, −100 = masked):",
    "loss.formula_title": "The mean loss and its denominator",
    "loss.formula_caption": "ℓ_t = −log p(token t+1 | tokens ≤ t) in nats. N = {n} supervised targets out of {total}; "
                            "masked: {masked}, left out of both the sum and N.",
    "loss.none_supervised": "No supervised tokens: all {n} targets are masked, so there is nothing to average and the "
                            "loss is undefined (0 / 0). Unmask some tokens to get a loss.",
    "loss.latex_supervised": "supervised",
    "loss.metric_loss": "mean loss (nats)",
    "loss.metric_n": "supervised targets N",
    "loss.metric_ppl": "perplexity e^loss",
    "loss.per_pos_title": "What each position contributes",
    "loss.bar_title": "Contribution ℓ_t / N of each position to the mean loss (N = {n})",
    "loss.bar_x": "position t: input token → target token",
    "loss.bar_y": "contribution (nats)",
    "loss.masked_hover": "masked (label −100): no loss",
    "loss.bar_caption": "The bars add up to the mean loss. Gaps on a grey band are masked targets: they have no loss at all, which is "
                        "different from a loss of 0. A random model gives every target roughly ln V nats.",
    "loss.col.position": "position t",
    "loss.col.input": "input token (t)",
    "loss.col.target": "target token (t+1)",
    "loss.col.masked": "masked",
    "loss.col.loss": "loss (nats)",
    "loss.col.share": "share of the mean",
    "loss.masked_yes": "🚫 masked (−100)",
    "loss.table_all_masked": "Every row is masked, so no row has a loss (shown as —).",
    "loss.keep_title": "logits_to_keep: only the positions you need",
    "loss.keep_explain": "Training needs logits at every position, but generating the next token needs only the last "
                         "one: the next token is predicted from the last position. `model(input_ids, logits_to_keep=k)` "
                         "still runs every block on all T tokens (attention needs every key) but applies the LM head — "
                         "the large H × V matrix — to the last k positions only.",
    "loss.keep": "Positions to keep k",
    "loss.keep_shape": "kept logits shape",
    "loss.full_shape": "full logits shape",
    "loss.keep_diff": "max |kept − full tail|",
    "loss.keep_equal": "The kept logits equal the full logits at the last k = {k} positions exactly (torch.equal is True).",
    "loss.keep_close": "The kept logits equal the full logits at the last k = {k} positions up to float32 rounding (max "
                       "difference {diff} ≤ {tol}). torch.equal is False because a matrix product over fewer rows may "
                       "add up in a different order; the values are the same computation.",
    "loss.keep_differ": "The kept logits differ from the tail of the full logits by {diff}: this should not happen.",
    "loss.keep_saving": "Logit values produced: {full} for all positions vs {kept} kept; the LM head skips {flops} "
                        "multiply-adds.",
    "loss.keep_run": "Run the check (two forwards)",
    "loss.keep_on_request": "The check runs this model twice, once for every position's logits and once for the kept "
                            "ones (about {gflop} GFLOP), so on a model this large it runs when asked for; once run, "
                            "every session with the same model, text and k sees it at once.",
}

ZH = {
    "loss.title": "损失与掩码：哪些 token 参与训练",
    "loss.explain": "因果语言模型的训练目标是根据前 t 个 token 预测第 t+1 个 token，所以 T 个 token 给出 T−1 个预测目标。"
                    "把某个标签设为 −100 就去掉了这个目标：它没有损失，也不再计入分母 N，因此平均值只在受监督的目标上计算。"
                    "对话微调正是这样只训练回答、不训练提示词的。",
    "loss.too_short": "计算损失至少需要两个 token（一个输入和一个要预测的目标）。请输入更长的文本，或在侧边栏增大序列长度。",
    "loss.mask_title": "选择受监督的目标",
    "loss.prompt_len": "提示词长度（掩码前 N 个 token）",
    "loss.prompt_help": "labels[:N] = −100：提示词中的 token 永远不作为目标。N = T 会掩码全部。",
    "loss.masked": "另外掩码单个 token",
    "loss.masked_help": "所选 token 的标签变为 −100，于是预测它的那一行被去掉。",
    "loss.masked_placeholder": "选择要掩码的 token",
    "loss.masked_dropped": "掩码位置 {dropped} 在当前输入中已不存在，已被移除。",
    "loss.labels_caption": "标签（输入 id，−100 = 掩码）：",
    "loss.formula_title": "平均损失及其分母",
    "loss.formula_caption": "ℓ_t = −log p(第 t+1 个 token | 前 t 个 token)，单位为奈特。N = {total} 个目标中受监督的 {n} 个；"
                            "被掩码的 {masked} 个既不计入求和，也不计入 N。",
    "loss.none_supervised": "没有受监督的 token：全部 {n} 个目标都被掩码，没有可以平均的项，损失没有定义（0 / 0）。"
                            "取消部分掩码即可得到损失。",
    "loss.latex_supervised": "受监督",
    "loss.metric_loss": "平均损失（奈特）",
    "loss.metric_n": "受监督目标数 N",
    "loss.metric_ppl": "困惑度 e^损失",
    "loss.per_pos_title": "每个位置的贡献",
    "loss.bar_title": "每个位置对平均损失的贡献 ℓ_t / N（N = {n}）",
    "loss.bar_x": "位置 t：输入 token → 目标 token",
    "loss.bar_y": "贡献（奈特）",
    "loss.masked_hover": "已掩码（标签 −100）：没有损失",
    "loss.bar_caption": "柱子加起来等于平均损失。灰色带上的空缺处是被掩码的目标：它们根本没有损失，这和损失为 0 不同。"
                        "随机模型给每个目标的损失大约是 ln V 奈特。",
    "loss.col.position": "位置 t",
    "loss.col.input": "输入 token（t）",
    "loss.col.target": "目标 token（t+1）",
    "loss.col.masked": "掩码",
    "loss.col.loss": "损失（奈特）",
    "loss.col.share": "占平均值比例",
    "loss.masked_yes": "🚫 已掩码（−100）",
    "loss.table_all_masked": "所有行都被掩码，因此没有任何一行有损失（显示为 —）。",
    "loss.keep_title": "logits_to_keep：只保留需要的位置",
    "loss.keep_explain": "训练需要每个位置的 logits，而生成下一个 token 只需要最后一个位置：下一个 token 由最后一个位置预测。"
                         "`model(input_ids, logits_to_keep=k)` 仍会在全部 T 个 token 上运行每个 Block（注意力需要所有的键），"
                         "但只对最后 k 个位置应用输出头（lm_head）——那个很大的 H × V 矩阵。",
    "loss.keep": "保留的位置数 k",
    "loss.keep_shape": "保留的 logits 形状",
    "loss.full_shape": "完整 logits 形状",
    "loss.keep_diff": "最大 |保留 − 完整末尾|",
    "loss.keep_equal": "保留的 logits 与完整 logits 的最后 {k} 行完全相等（逐元素比较 torch.equal 返回“真”）。",
    "loss.keep_close": "保留的 logits 与完整 logits 的最后 {k} 行在单精度浮点（float32）舍入误差内相等（最大差 {diff} ≤ {tol}）。"
                       "逐元素比较（torch.equal）返回“假”，是因为对更少的行做矩阵乘法时求和顺序可能不同；两者是同一个计算。",
    "loss.keep_differ": "保留的 logits 与完整 logits 的末尾相差 {diff}：这不应该发生。",
    "loss.keep_saving": "产生的 logit 数值：所有位置共 {full} 个，保留后 {kept} 个；输出头省去了 {flops} 次乘加运算。",
    "loss.keep_run": "运行检查（两次前向）",
    "loss.keep_on_request": "这项检查要把模型运行两次：一次算出每个位置的 logits，一次只算保留的 logits（约 {gflop} GFLOP），"
                            "模型这么大时按需运行；运行之后，模型、文本和 k 相同的每个会话都会立即看到结果。",
}
