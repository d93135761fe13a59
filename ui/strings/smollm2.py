"""Strings for SmolLM2-135M-Instruct: its conversion progress and its parity badge."""

EN = {
    "smollm2.stage.verify": "Checking the converted SmolLM2 files ({done}/{total})…",
    "smollm2.stage.read": "First use: reading SmolLM2's GGUF file (about 20 s, once per machine)…",
    "smollm2.stage.tensors": "Dequantizing SmolLM2's weights to float32: tensor {done} of {total}…",
    "smollm2.stage.tokenizer": "Building SmolLM2's tokenizer from the file's vocabulary and merges…",
    "smollm2.stage.write": "Writing the converted model to the cache…",
    "smollm2.badge.computing": "Checking SmolLM2's logits two ways…",
    "smollm2.badge.ok": "Parity: max |Δlogit| = {diff}",
    "smollm2.badge.bad": "Parity failed: max |Δlogit| = {diff}",
    "smollm2.badge.details": "The two checks",
    "smollm2.badge.paths": "**This text** ({n} tokens): attention as an explicit softmax (what the heatmaps show) "
                           "against PyTorch's fused `scaled_dot_product_attention`: max |Δlogit| = {diff}, "
                           "{share} of the largest |logit| ({scale}).",
    "smollm2.badge.reference": "**Reference prompts** ({n} prompts, {tokens} tokens, numbers shipped with the "
                               "tests): our logits against transformers' own loading of the same GGUF file: "
                               "max |Δlogit| = {diff}, {share} of the largest |logit|; same top-1 token at every "
                               "position: {top1}.",
    "smollm2.badge.same_text": "The text on screen is one of these prompts: on it, our logits and transformers' "
                               "differ by at most {diff}.",
    "smollm2.badge.rule": "Green when every difference is at most {rtol} × the largest |logit| and the top-1 "
                          "tokens agree.",
    "smollm2.badge.yes": "yes",
    "smollm2.badge.no": "no",
}

ZH = {
    "smollm2.stage.verify": "正在校验已转换的 SmolLM2 文件（{done}/{total}）…",
    "smollm2.stage.read": "首次使用：正在读取 SmolLM2 的 GGUF 文件（约 20 秒，每台机器只需一次）…",
    "smollm2.stage.tensors": "正在把 SmolLM2 的权重反量化为单精度浮点（float32）：第 {done} / {total} 个张量…",
    "smollm2.stage.tokenizer": "正在根据文件中的词表和合并规则构建 SmolLM2 的分词器…",
    "smollm2.stage.write": "正在把转换后的模型写入缓存…",
    "smollm2.badge.computing": "正在用两种方式核对 SmolLM2 的 logits…",
    "smollm2.badge.ok": "一致性：最大 |Δlogit| = {diff}",
    "smollm2.badge.bad": "一致性检查失败：最大 |Δlogit| = {diff}",
    "smollm2.badge.details": "两项核对",
    "smollm2.badge.paths": "**当前文本**（{n} 个 token）：显式 softmax 注意力（热力图显示的就是它）与 PyTorch 融合的 "
                           "`scaled_dot_product_attention` 相比：最大 |Δlogit| = {diff}，为最大 |logit|（{scale}）的 {share}。",
    "smollm2.badge.reference": "**参考提示词**（{n} 条，共 {tokens} 个 token，数值随测试一起提供）：我们的 logits 与 "
                               "transformers 库自己加载同一个 GGUF 文件得到的 logits 相比：最大 |Δlogit| = {diff}，"
                               "为最大 |logit| 的 {share}；每个位置的 top-1 token 都相同：{top1}。",
    "smollm2.badge.same_text": "当前文本正是其中一条参考提示词：在它上面，我们的 logits 与 transformers 库的最多相差 {diff}。",
    "smollm2.badge.rule": "每个差值都不超过最大 |logit| 的 {rtol} 倍且 top-1 token 一致时显示绿色。",
    "smollm2.badge.yes": "是",
    "smollm2.badge.no": "否",
}
