"""The sidebar's block-variants group (ui/variant_controls.py)."""

EN = {
    "variants.section": "Block variants (2024–2026)",
    "variants.caption": "What newer models changed in the block. Off by default; a variant preset sets them.",
    "variants.qk_norm": "QK-norm",
    "variants.qk_norm.none": "none",
    "variants.qk_norm.per_head": "per head (Qwen3)",
    "variants.qk_norm.per_projection": "whole projection (OLMo-2)",
    "variants.qk_norm.help": "An RMSNorm on every query and key before RoPE, so attention scores cannot grow without "
                             "bound.",
    "variants.sliding_window": "Sliding window (keys a local layer sees)",
    "variants.sliding_window.help": "A sliding layer's query sees itself and the window − 1 keys before it; its KV "
                                    "cache keeps only those.",
    "variants.off": "off",
    "variants.layer_types": "Which layers slide",
    "variants.layer_types.all": "every layer (Mistral)",
    "variants.layer_types.alternate": "every other layer (Gemma 2, gpt-oss)",
    "variants.layer_types.five_to_one": "5 local : 1 global (Gemma 3)",
    "variants.own_pattern": "Which layers slide: the preset's or upload's own pattern (kept as it is).",
    "variants.attention_sinks": "Attention sinks (gpt-oss)",
    "variants.attention_sinks.help": "One learned logit per head joins every softmax row with no value: a row may "
                                     "give weight to nothing.",
    "variants.num_local_experts": "Experts in each FFN (mixture of experts)",
    "variants.num_local_experts.help": "The FFN becomes several experts; a router sends each token to the top-k.",
    "variants.dense": "dense",
    "variants.num_experts_per_tok": "Experts per token (top-k)",
}

ZH = {
    "variants.section": "块的新变体（2024–2026）",
    "variants.caption": "较新的模型在块里改了什么。默认关闭；选择一个变体预设会设置它们。",
    "variants.qk_norm": "QK 归一化",
    "variants.qk_norm.none": "无",
    "variants.qk_norm.per_head": "每个头（Qwen3）",
    "variants.qk_norm.per_projection": "整个投影（OLMo-2）",
    "variants.qk_norm.help": "在 RoPE 之前对每个查询和键做 RMSNorm，使注意力分数不会无限增大。",
    "variants.sliding_window": "滑动窗口（局部层看到的键数）",
    "variants.sliding_window.help": "滑动层的查询只看见自己和前面窗口 − 1 个键；它的 KV 缓存也只保留这些。",
    "variants.off": "关",
    "variants.layer_types": "哪些层滑动",
    "variants.layer_types.all": "每一层（Mistral）",
    "variants.layer_types.alternate": "隔一层（Gemma 2、gpt-oss）",
    "variants.layer_types.five_to_one": "5 个局部层 : 1 个全局层（Gemma 3）",
    "variants.own_pattern": "哪些层滑动：沿用预设或上传配置自己的模式。",
    "variants.attention_sinks": "注意力汇聚点（gpt-oss）",
    "variants.attention_sinks.help": "每个头多一个学到的 logit，加入每一行 softmax 但没有值向量：一行可以把权重给“谁也不给”。",
    "variants.num_local_experts": "每个前馈层的专家数（混合专家）",
    "variants.num_local_experts.help": "前馈网络变成几个专家；路由器把每个 token 送给得分最高的 k 个。",
    "variants.dense": "稠密",
    "variants.num_experts_per_tok": "每个 token 的专家数（top-k）",
}
