"""Strings for SmolLM2-135M-Instruct: its conversion progress and its parity badge."""

EN = {
    "smollm2.stage.verify": "Checking the converted SmolLM2 files ({done}/{total})…",
    "smollm2.stage.read": "First use: reading SmolLM2's GGUF file (about 20 s, once per machine)…",
    "smollm2.stage.tensors": "Dequantizing SmolLM2's weights to float32: tensor {done} of {total}…",
    "smollm2.stage.tokenizer": "Building SmolLM2's tokenizer from the file's vocabulary and merges…",
    "smollm2.stage.write": "Writing the converted model to the cache…",
}

ZH = {
    "smollm2.stage.verify": "正在校验已转换的 SmolLM2 文件（{done}/{total}）…",
    "smollm2.stage.read": "首次使用：正在读取 SmolLM2 的 GGUF 文件（约 20 秒，每台机器只需一次）…",
    "smollm2.stage.tensors": "正在把 SmolLM2 的权重反量化为 float32：第 {done} / {total} 个张量…",
    "smollm2.stage.tokenizer": "正在根据文件中的词表和合并规则构建 SmolLM2 的分词器…",
    "smollm2.stage.write": "正在把转换后的模型写入缓存…",
}
