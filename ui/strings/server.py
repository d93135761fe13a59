"""Server-side limits: the cost budget of an action and the queue of heavy jobs."""

EN = {
    "budget.action.build": "building this model",
    "budget.action.trace": "tracing this input",
    "budget.action.gradient": "computing these gradients",
    "budget.action.train": "this training run",
    "budget.action.race": "this race",
    "budget.refused": "Not started: {action} would need about {mem} of memory ({parts}) and {flops}; this server "
                      "allows {budget_mem} and {budget_flops} per action.",
    "budget.part.parameters": "weights",
    "budget.part.buffers": "tables",
    "budget.part.activations": "activations",
    "budget.part.attention maps": "attention maps",
    "budget.part.gradients": "gradients",
    "budget.part.optimizer": "optimizer state",
    "budget.part.logits": "logits",
    "budget.suggest": "The nearest setting that fits: {options}.",
    "budget.try.tokens": "{n} tokens",
    "budget.try.layers": "{n} layers",
    "budget.try.steps": "{n} steps",
    "budget.try.seq_len": "sequence length {n}",
    "budget.no_suggestion": "No single change fits: choose a smaller model (smaller vocabulary or hidden size).",
    "budget.flops": "{n} GFLOP",
    "queue.waiting": "Waiting for a free slot: {ahead} runs ahead of you ({running} running, at most {limit} at once "
                     "on this server).",
    "queue.waiting_one": "Waiting for a free slot: 1 run ahead of you ({running} running, at most {limit} at once "
                         "on this server).",
    "queue.next": "Waiting for a free slot: you are next ({running} running, at most {limit} at once on this server).",
    "queue.busy": "The server is busy with other students' runs; this chart is computed as soon as a slot frees up.",
}

ZH = {
    "budget.action.build": "构建这个模型",
    "budget.action.trace": "对这段输入做完整前向记录",
    "budget.action.gradient": "计算这些梯度",
    "budget.action.train": "这次训练",
    "budget.action.race": "这场对比赛跑",
    "budget.refused": "未开始：{action}估计需要约 {mem} 内存（{parts}）和 {flops}；本服务器每次操作最多允许 "
                      "{budget_mem} 内存和 {budget_flops}。",
    "budget.part.parameters": "权重",
    "budget.part.buffers": "位置表",
    "budget.part.activations": "激活值",
    "budget.part.attention maps": "注意力图",
    "budget.part.gradients": "梯度",
    "budget.part.optimizer": "优化器状态",
    "budget.part.logits": "输出分数",
    "budget.suggest": "在预算内最接近的设置：{options}。",
    "budget.try.tokens": "{n} 个 token",
    "budget.try.layers": "{n} 层",
    "budget.try.steps": "{n} 步",
    "budget.try.seq_len": "序列长度 {n}",
    "budget.no_suggestion": "单改一项都放不下：请选更小的模型（更小的词表或隐藏维度）。",
    "budget.flops": "{n} 十亿次浮点运算",
    "queue.waiting": "正在排队等待空位：前面还有 {ahead} 个任务（正在运行 {running} 个，本服务器最多同时运行 {limit} 个）。",
    "queue.waiting_one": "正在排队等待空位：前面还有 1 个任务（正在运行 {running} 个，本服务器最多同时运行 {limit} 个）。",
    "queue.next": "正在排队等待空位：下一个就是你（正在运行 {running} 个，本服务器最多同时运行 {limit} 个）。",
    "queue.busy": "服务器正忙于其他同学的任务；一有空位就会计算这张图。",
}
