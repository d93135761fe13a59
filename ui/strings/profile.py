"""Sentences describing a per-block profile (ui/profile.py): one rule for every page that puts depth into words."""

EN = {
    "profile.two": "**{name}**: block 1 → block 2: {first} → {second} ({step})",
    "profile.then": "; blocks 2 → {L}: {second} → {last} ({rest})",
    "profile.end": ".",
    "profile.step.flat": "about the same, within a factor {r}",
    "profile.step.grows": "{r}× larger",
    "profile.step.shrinks": "{r}× smaller",
    "profile.rest.flat": "roughly flat: all within a factor {spread} of each other",
    "profile.rest.grows": "grows toward the output, ×{ratio} in all",
    "profile.rest.shrinks": "shrinks toward the output, to {ratio}× block 2's",
    "profile.rest.mixed": "rises and falls: lowest at block {lowest}, highest at block {highest}",
}

ZH = {
    "profile.two": "**{name}**：第 1 层 → 第 2 层：{first} → {second}（{step}）",
    "profile.then": "；第 2 层 → 第 {L} 层：{second} → {last}（{rest}）",
    "profile.end": "。",
    "profile.step.flat": "大致相同，相差 {r} 倍以内",
    "profile.step.grows": "增大到 {r} 倍",
    "profile.step.shrinks": "缩小为 1/{r}",
    "profile.rest.flat": "大致持平：彼此相差不超过 {spread} 倍",
    "profile.rest.grows": "越靠近输出越大，共增大 {ratio} 倍",
    "profile.rest.shrinks": "越靠近输出越小，降到第 2 层的 {ratio} 倍",
    "profile.rest.mixed": "有升有降：第 {lowest} 层最低，第 {highest} 层最高",
}
