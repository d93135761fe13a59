"""Example prompts and the notice about a model's languages (ui/examples.py)."""

EN = {
    "examples.label": "Example prompts",
    "examples.sentence": "English sentence",
    "examples.code": "Code",
    "examples.induction": "Repeated random words",
    "examples.poem": "Tang poem (River Snow)",
    "examples.induction_zh": "Repeated random characters",
    "examples.lang.en": "English",
    "examples.lang.zh": "Chinese",
    "examples.list_sep": ", ",
    "examples.notice": "{model} was trained mostly on {langs}: {share} of the letters in this text are in other "
                       "scripts and {split} of its {n} tokens are byte pieces, so it shows little of its structure "
                       "here. Try a prompt in its language:",
    "examples.notice_short": "{model} knows mostly {langs}; {share} of this text is not.",
}

ZH = {
    "examples.label": "示例提示词",
    "examples.sentence": "英文句子",
    "examples.code": "代码",
    "examples.induction": "重复的随机单词",
    "examples.poem": "唐诗《江雪》",
    "examples.induction_zh": "重复的随机汉字",
    "examples.lang.en": "英语",
    "examples.lang.zh": "中文",
    "examples.list_sep": "、",
    "examples.notice": "{model} 主要用{langs}训练：这段文本里 {share} 的字符属于其他文字（不是{langs}），{n} 个 token 中有 "
                       "{split} 个是字节片段，所以这里看不出它的结构。试试用{langs}写的提示词：",
    "examples.notice_short": "{model} 主要懂{langs}；这段文本有 {share} 不是{langs}。",
}
