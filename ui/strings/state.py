"""Sidebar state: reset, link values that could not be used, long text, fixed config fields."""

EN = {
    "state.reset": "↺ Reset to defaults",
    "state.reset.help": "Every model setting, the seed and the input back to the app's defaults.",
    "state.dismiss": "OK",
    "state.link.bad": "The link's **{name}** (`{param}`) = “{value}” was ignored: {why} Using {default}.",
    "state.link.choice": "it must be one of {options}.",
    "state.link.int": "it must be a whole number from {lo} to {hi}.",
    "state.link.bool": "it must be true or false.",
    "state.link.repeated": "it appears more than once.",
    "state.text_cut": "The text had {n} characters; only the first {limit} are kept.",
    "cfg.fixed": "Without a slider (set by a preset or an upload): norm_eps {eps} · rope_theta {theta} · bias {bias} · attention_bias {qkv} · max_position_embeddings {positions}",
    "cfg.fixed.follows_bias": "as bias",
    "model.not_offered.tok_larger": "Checkpoint **{name}** is not offered: its tokenizer has {tok} tokens but the model has only {v} embeddings, so some text would give token ids the model cannot look up.",
    "model.not_offered.unsupported": "Checkpoint **{name}** is not offered: {why}",
    "model.tok_larger": "This checkpoint's tokenizer has {tok} tokens but the model has only {v} embeddings: text containing a token id above {last} cannot be fed to it.",
    "input.outside_vocab": "{n} token(s) of this text have ids outside the model's vocabulary of {v}: {tokens}. The checkpoint's tokenizer is larger than its model; edit the text to avoid them.",
}

ZH = {
    "state.reset": "↺ 恢复默认设置",
    "state.reset.help": "把所有模型设置、随机种子和输入恢复为应用的默认值。",
    "state.dismiss": "知道了",
    "state.link.bad": "链接中的 **{name}**（`{param}`）=“{value}”无效，已忽略：{why}现使用 {default}。",
    "state.link.choice": "它必须是以下之一：{options}。",
    "state.link.int": "它必须是 {lo} 到 {hi} 之间的整数。",
    "state.link.bool": "它必须是 true 或 false。",
    "state.link.repeated": "它出现了不止一次。",
    "state.text_cut": "文本有 {n} 个字符，只保留前 {limit} 个。",
    "cfg.fixed": "没有滑块的字段（由预设或上传的配置决定）：norm_eps {eps} · rope_theta {theta} · bias {bias} · attention_bias {qkv} · max_position_embeddings {positions}",
    "cfg.fixed.follows_bias": "同 bias",
    "model.not_offered.tok_larger": "检查点 **{name}** 未列出：它的分词器有 {tok} 个 token，而模型只有 {v} 个嵌入，某些文本会产生模型无法查找的 token id。",
    "model.not_offered.unsupported": "检查点 **{name}** 未列出：{why}",
    "model.tok_larger": "该检查点的分词器有 {tok} 个 token，而模型只有 {v} 个嵌入：含有 id 大于 {last} 的 token 的文本无法输入模型。",
    "input.outside_vocab": "这段文本中有 {n} 个 token 的 id 超出了模型 {v} 的词表：{tokens}。该检查点的分词器比模型的词表大；请修改文本避开它们。",
}
