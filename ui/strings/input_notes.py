"""The sidebar's notes on its input: the tokenizer in use, and a tutorial's words for random ids."""

EN = {
    "tokenizer.char_bpe": "Tokenizer: a character-level BPE trained on the bundled corpus (Tang poems and Genesis), "
                          "{n} tokens; a Chinese character is never split, frequent runs become one token.",
    "tokenizer.byte_level": "Tokenizer: GPT-2-style byte-level BPE (the tokenizers library's ByteLevel pre-tokenizer "
                            "and decoder, 256 byte symbols), trained on the bundled English text: {n} tokens. Like "
                            "GPT-2's, whose merges were learned from English web text, it splits Chinese into UTF-8 "
                            "bytes: here 3 tokens per character (GPT-2's own vocabulary: 1 to 3). It is not GPT-2's "
                            "{gpt2}-token vocabulary, which is not bundled; the model's other ids are never produced.",
    "tokenizer.checkpoint": "Tokenizer: the checkpoint's own ({name}, {n} tokens).",
    "input.unknown": "{n} character(s) of the text ({k} different) became [UNK], one token the model cannot tell "
                     "apart: the tokenizer's {v} tokens have none for {chars}.",
    "input.unknown.more": "and {n} more",
    "input.unknown.fix_sliders": "Fix: a larger “{vocab}”, or a byte-level tokenizer "
                                 "that never gives [UNK], such as SmolLM2's (under “{model}”).",
    "input.unknown.fix_checkpoint": "Fix: a model with a byte-level tokenizer that never "
                                    "gives [UNK], such as SmolLM2 ({v} tokens here).",
    "input.tutorial_words": "Rows {words}, as in the tutorial: it feeds its three words as random vectors, and so "
                            "does this model (random ids {ids}, whose embeddings are random at initialisation).",
}

ZH = {
    "tokenizer.char_bpe": "分词器：在内置语料（唐诗与《创世记》）上训练的字符级 BPE，共 {n} 个 token；汉字从不被拆开，常见的字串合并成一个 token。",
    "tokenizer.byte_level": "分词器：GPT-2 式字节级 BPE（tokenizers 库的 ByteLevel 预分词器与解码器，256 个字节符号），"
                            "在内置英文文本上训练，共 {n} 个 token。与 GPT-2 一样（它的合并规则学自英文网页），"
                            "中文被拆成 UTF-8 字节：这里每个汉字 3 个 token（GPT-2 自己的词表为 1 到 3 个）。"
                            "这不是 GPT-2 的 {gpt2} 词表（未随项目提供）；模型的其余 id 不会出现。",
    "tokenizer.checkpoint": "分词器：检查点自带的（{name}，{n} 个 token）。",
    "input.unknown": "文本中有 {n} 个字符（{k} 种）变成了同一个 [UNK]，模型无法区分：分词器的 {v} 个 token 里没有 {chars}。",
    "input.unknown.more": "另有 {n} 种",
    "input.unknown.fix_sliders": "解决：调大“{vocab}”，或换用从不产生 [UNK] 的字节级分词器，"
                                 "例如 SmolLM2（在“{model}”中选择）。",
    "input.unknown.fix_checkpoint": "解决：换用从不产生 [UNK] 的字节级分词器的模型，例如 SmolLM2（这里只有 {v} 个 token）。",
    "input.tutorial_words": "各行为 {words}，与教程一致：教程把这三个词作为随机向量输入，本模型也是如此"
                            "（随机 id {ids}，初始化时它们的嵌入就是随机向量）。",
}
