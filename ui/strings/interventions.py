"""Interventions page (namespace ``interv``). Layers and heads are counted from 1 on the page, positions from 0."""

EN = {
    "nav.interventions": "Interventions",
    "interv.title": "Interventions: remove a head, patch an activation, see what it was for",
    "interv.explain": "An attention pattern is a correlation; an intervention asks the causal question. **Ablate** "
                      "a head (its output set to 0 before `o_proj`) and measure how much worse the model gets; "
                      "**patch** an activation (`hook_resid_pre` at one layer and position, or one head's `hook_z`) "
                      "from a clean run into a corrupted one and measure how much of the right answer comes back. "
                      "Every run is the real model with one argument changed: `model(ids, interventions=[...])`. "
                      "Click a cell of a map to see what that intervention changed. Layers and heads are counted "
                      "from 1 here, as on the other pages (the activation names count from 0).",
    "interv.random": "This model has random weights: nothing causal is expected. Removing a head or patching an "
                     "activation changes the output by chance amounts, and no head or position stands out for a "
                     "reason. Load SmolLM2-135M in the sidebar (or train a model in the Training lab) to see circuits.",
    "interv.random_short": "Random weights: nothing causal is expected (load SmolLM2 in the sidebar).",
    "interv.experiment": "Experiment",
    "interv.experiment.induction": "Induction (copying)",
    "interv.experiment.facts": "Facts (capital cities)",
    "interv.experiment.names": "Names (IOI)",
    "interv.experiment.own": "Your own prompts",
    "interv.layers": "Layers swept",
    "interv.layers_help": "Sweep only these layers (fewer runs, a shorter wait). The strongest heads and layers named "
                          "below are then the strongest among these layers.",
    "interv.subset": "Only layers {lo}–{hi} of {L} were swept: what is named below is the strongest among them.",
    "interv.run": "Run the sweep",
    "interv.estimate": "{runs} intervened runs, about {forwards} plain forwards' worth of work (layers before an "
                       "intervention are reused from the clean run). One plain forward of this prompt took {one} "
                       "here: about {eta} in all, if no one else is computing.",
    "interv.waiting": "Waiting for a free slot of this server's line of heavy jobs: {ahead} ahead.",
    "interv.waiting_next": "Waiting for a free slot of this server's line of heavy jobs: next in line.",
    "interv.progress": "{done} of {total} forwards' worth · {elapsed} so far · about {eta} left",
    "interv.progress_start": "Starting the sweep…",
    "interv.watchers": "{n} sessions are waiting for this same sweep; it is computed once for all of them.",
    "interv.cancel": "Cancel",
    "interv.cancelled": "The sweep was cancelled. Press “Run the sweep” to start it again.",
    "interv.error": "The sweep failed: {error}",
    "interv.computing": "Computing…",
    # induction
    "interv.ind.setup": "A random sequence of {n} tokens followed by the same {n} tokens (seed 0, special tokens "
                        "excluded). Metric: the mean loss on the second copy ({m} tokens, the ones a model can get "
                        "right only by copying from the first copy). Plain run: {base} nats.",
    "interv.ind.map_title": "Loss increase on the second copy when one head is removed, nats (click a cell)",
    "interv.ind.unit": "Δ loss (nats)",
    "interv.ind.top": "Removing layer {layer} head {head} raises the loss on the second copy from {base} to {loss} "
                      "nats; no other single head raises it by more than {runner}.",
    "interv.ind.none": "No single head matters much: the loss on the second copy is {base} nats, and the largest "
                       "rise, from removing layer {layer} head {head}, is {rise} nats.",
    "interv.ind.circuit": "The strongest previous-token head (layer {pl} head {ph}, score {ps}) changes it by {pr} "
                          "nats when removed; the strongest induction-score head (layer {il} head {ih}, score {iscore}) "
                          "by {ir} nats.",
    "interv.ind.ratio_prev": "The previous-token head's removal costs {ratio}× as much as the induction head's: the "
                             "head whose pattern looks like copying is not the one the loss depends on most.",
    "interv.ind.ratio_ind": "The induction head's removal costs {ratio}× as much as the previous-token head's.",
    "interv.ind.same_head": "The strongest previous-token head and the strongest induction-score head are the same "
                            "head (layer {layer} head {head}).",
    "interv.ind.together_title": "Loss on the second copy with heads removed together, nats",
    "interv.ind.together_x": "heads removed",
    "interv.ind.together_y": "loss on the second copy (nats)",
    "interv.ind.group.none": "none",
    "interv.ind.group.prev": "previous-token head",
    "interv.ind.group.induction": "induction head",
    "interv.ind.group.pair": "both",
    "interv.ind.group.top": "top {k}",
    "interv.ind.pair": "Removing both heads of the circuit together changes the loss from {base} to {pair} nats "
                       "(alone: {pr} and {ir}; together: {both}).",
    "interv.ind.topk": "Removing the {k} heads whose single removal costs most ({heads}) together: {loss} nats.",
    "interv.ind.preview_title": "Before you run: each head's induction score on this sequence (what the patterns "
                                "suggest)",
    "interv.ind.preview_unit": "induction score",
    "interv.ind.preview": "By its pattern, layer {il} head {ih} looks most like an induction head (score {iscore}); "
                          "layer {pl} head {ph} attends most to the previous token (score {ps}). Predict: which one's "
                          "removal raises the loss on the second copy more? Then run the sweep.",
    # prompt pairs
    "interv.pair.clean": "clean prompt",
    "interv.pair.corrupt": "corrupted prompt",
    "interv.pair.preview_title": "Before you run: the top next tokens of the clean and the corrupted prompt",
    "interv.pair.setup": "Clean: “{clean}” → {correct}. Corrupted: “{corrupt}” → {wrong}. Metric: logit({correct}) − "
                         "logit({wrong}) at the last position: {clean_diff} on the clean prompt, {corrupt_diff} on the "
                         "corrupted one. A patch restores (patched − corrupted) / (clean − corrupted) of it: 1 = the "
                         "clean run's difference, 0 = the corrupted run's.",
    "interv.pair.not_preferred": "On the clean prompt the model does not prefer {correct} to {wrong} (difference "
                                 "{diff}): there is little answer to trace, and the fractions below mean little.",
    "interv.pair.no_gap": "The clean and the corrupted prompt give the same logit difference ({diff}): there is "
                          "nothing to restore, so every fraction below is undefined.",
    "interv.own.clean": "Clean prompt",
    "interv.own.corrupt": "Corrupted prompt (same number of tokens)",
    "interv.own.correct": "Clean answer (one token, with its leading space)",
    "interv.own.wrong": "Corrupted answer (one token)",
    "interv.own.tokens": "Clean: {clean_n} tokens · corrupted: {corrupt_n} tokens.",
    "interv.check.empty": "A prompt is empty: give both prompts some text.",
    "interv.check.length": "The two prompts have different lengths in tokens ({a} and {b}): patching position by "
                           "position needs the same length. Change a word until both have the same number of tokens.",
    "interv.check.same_prompt": "The two prompts are the same tokens: change one word of the corrupted prompt.",
    "interv.check.answer_tokens": "Each answer must be exactly one token: {correct} is {ca} tokens, {wrong} is {wa}.",
    "interv.check.same_answer": "The two answers are the same token: pick two different answers.",
    "interv.no_tokenizer": "This experiment needs a tokenizer (its prompts are text); the sidebar's input is random "
                           "token ids. Switch the input to text, or pick the induction experiment.",
    "interv.res.map_title": "Fraction of the logit difference restored by patching hook_resid_pre from the clean run "
                            "(click a cell)",
    "interv.res.x": "position (token)",
    "interv.res.unit": "restored",
    "interv.res.carried": "Patching {token} (position {pos}, where the prompts differ) restores at least half of the "
                          "difference from layer 1 up to layer {until}; patching the last position {last} does from "
                          "layer {start} on.",
    "interv.res.carried_only": "Patching {token} (position {pos}, where the prompts differ) restores at least half "
                               "of the difference up to layer {until}; patching the last position never does.",
    "interv.res.none": "No single (layer, position) patch restores half of the difference; the largest, {best}, is "
                       "layer {layer} at position {pos} {token}.",
    "interv.res.best": "The largest restoration, {best}, is at layer {layer}, position {pos} {token}.",
    "interv.heads.title": "Fraction restored by patching one head's output (hook_z) from the clean run, layers "
                          "{layers} (click a cell)",
    "interv.heads.x": "head",
    "interv.heads.sentence": "In layers {layers} (where patching the last position gains most), patching layer "
                             "{layer} head {head} restores {best}; no other head there restores more than {runner}.",
    "interv.heads.none": "In layers {layers} no single head restores anything: the largest is {best}.",
    "interv.layer_axis": "layer",
    "interv.head_axis": "head",
    # the clicked cell: before and after
    "interv.ba.ablation": "What changed: layer {layer} head {head} removed",
    "interv.ba.patch": "What changed: layer {layer}, position {pos} {token} patched from the clean run",
    "interv.ba.head_patch": "What changed: layer {layer} head {head}'s output patched from the clean run",
    "interv.ba.watch_layer": "Pattern of layer",
    "interv.ba.watch_head": "head",
    "interv.ba.position": "Next tokens after position",
    "interv.ba.before": "before",
    "interv.ba.after": "after",
    "interv.ba.pattern_title": "Layer {layer} head {head}, {when}",
    "interv.ba.same": "This head's pattern cannot change: it is computed before the intervention at layer {layer} "
                      "(an intervention changes only what comes after it).",
    "interv.ba.changed": "Largest change in this head's pattern: {delta} (query {q}, key {k}); on the query rows of "
                         "the second copy its weight on the token to copy goes from {b} to {a} on average.",
    "interv.ba.changed_plain": "Largest change in this head's pattern: {delta} (query {q}, key {k}).",
    "interv.ba.tokens_title": "Top next tokens after position {pos} {token}: probability before and after",
    "interv.ba.prob": "probability",
    "interv.ba.top": "Before, the most likely next token is {before} ({pb}); after, {after} ({pa}).",
    "interv.ba.target": "The right next token {token} goes from {b} to {a}.",
    "interv.ba.pair": "{correct} goes from {cb} to {ca}, {wrong} from {wb} to {wa}.",
    "interv.x": "key (attended to)",
    "interv.y": "query",
    "interv.unit_prob": "weight",
}

ZH = {
    "nav.interventions": "干预实验",
    "interv.title": "干预实验：删掉一个头、替换一个激活，看它到底起什么作用",
    "interv.explain": "注意力模式只是相关；干预回答的是因果问题。**消融**一个头（把它在 `o_proj` 之前的输出置 0），"
        "看模型变差多少；**修补**一个激活（某层某位置的 `hook_resid_pre`，或某个头的 `hook_z`）：把干净"
        "运行里的值换进被破坏的运行，看正确答案恢复多少。每次运行都是真实模型，只多了一个参数："
        "`model(ids, interventions=[...])`。点击图中的格子，查看那次干预改变了什么。本页的层和头从 1 "
        "开始编号，与其他页面一致（激活名称从 0 开始）。",
    "interv.random": "这个模型的权重是随机的：不要期待任何因果结构。删掉一个头或修补一个激活，输出只会有偶然的变化，"
        "没有哪个头或位置会因为某种原因而突出。请在侧栏加载 SmolLM2-135M（或在训练实验室训练一个模型），"
        "才能看到电路。",
    "interv.random_short": "随机权重：不要期待任何因果结构（在侧边栏加载 SmolLM2）。",
    "interv.experiment": "实验",
    "interv.experiment.induction": "归纳（复制）",
    "interv.experiment.facts": "事实（首都）",
    "interv.experiment.names": "人名（间接宾语识别）",
    "interv.experiment.own": "自己的提示词",
    "interv.layers": "扫描的层",
    "interv.layers_help": "只扫描这些层（运行更少，等待更短）。下面提到的最强的头和层，就是这些层里最强的。",
    "interv.subset": "只扫描了第 {lo}–{hi} 层（共 {L} 层）：下面提到的是其中最强的。",
    "interv.run": "运行扫描",
    "interv.estimate": "共 {runs} 次干预运行，工作量约相当于 {forwards} 次普通前向（干预之前的层直接沿用干净运行的结果）。"
        "这个提示词的一次普通前向在这里用了 {one}：没有别人在计算时，总共约需 {eta}。",
    "interv.waiting": "正在等待本服务器重任务队列的空位：前面还有 {ahead} 个。",
    "interv.waiting_next": "正在等待本服务器重任务队列的空位：下一个就轮到。",
    "interv.progress": "已完成 {done} / {total} 次前向的工作量 · 已用 {elapsed} · 约剩 {eta}",
    "interv.progress_start": "正在开始扫描……",
    "interv.watchers": "有 {n} 个会话在等待同一次扫描；它只为大家计算一次。",
    "interv.cancel": "取消",
    "interv.cancelled": "扫描已取消。按“运行扫描”可以重新开始。",
    "interv.error": "扫描失败：{error}",
    "interv.computing": "正在计算……",
    "interv.ind.setup": "一段 {n} 个随机 token 的序列，后面接着同样的 {n} 个 token（种子 0，不含特殊 token）。指标：第二遍上的"
        "平均损失（{m} 个 token，只有从第一遍复制才能猜对）。不干预时：{base} 奈特。",
    "interv.ind.map_title": "删掉一个头后第二遍损失的增加量，单位为奈特（点击格子）",
    "interv.ind.unit": "损失增量（奈特）",
    "interv.ind.top": "删掉第 {layer} 层第 {head} 个头，第二遍上的损失从 {base} 升到 {loss} 奈特；"
        "其他任何单个头带来的上升都不超过 {runner}。",
    "interv.ind.none": "没有哪个单独的头很重要：第二遍上的损失是 {base} 奈特，最大的上升来自删掉第 {layer} 层第 {head} "
        "个头，只有 {rise} 奈特。",
    "interv.ind.circuit": "最强的前一 token 头（第 {pl} 层第 {ph} 个头，得分 {ps}）删掉后损失变化 {pr} 奈特；"
        "归纳得分最高的头（第 {il} 层第 {ih} 个头，得分 {iscore}）删掉后变化 {ir} 奈特。",
    "interv.ind.ratio_prev": "删掉前一 token 头的代价是删掉归纳头的 {ratio} 倍：模式看起来像在复制的那个头，"
        "并不是损失最依赖的那个。",
    "interv.ind.ratio_ind": "删掉归纳头的代价是删掉前一 token 头的 {ratio} 倍。",
    "interv.ind.same_head": "最强的前一 token 头和归纳得分最高的头是同一个头（第 {layer} 层第 {head} 个头）。",
    "interv.ind.together_title": "同时删掉几个头时第二遍上的损失，单位为奈特",
    "interv.ind.together_x": "删掉的头",
    "interv.ind.together_y": "第二遍上的损失（奈特）",
    "interv.ind.group.none": "不删",
    "interv.ind.group.prev": "前一 token 头",
    "interv.ind.group.induction": "归纳头",
    "interv.ind.group.pair": "两个一起",
    "interv.ind.group.top": "前 {k} 个",
    "interv.ind.pair": "把电路的两个头一起删掉，损失从 {base} 变为 {pair} 奈特（单独删：{pr} 和 {ir}；一起删：{both}）。",
    "interv.ind.topk": "把单独删除代价最大的 {k} 个头（{heads}）一起删掉：{loss} 奈特。",
    "interv.ind.preview_title": "运行之前：每个头在这段序列上的归纳得分（注意力模式给出的猜测）",
    "interv.ind.preview_unit": "归纳得分",
    "interv.ind.preview": "从注意力模式看，第 {il} 层第 {ih} 个头最像归纳头（得分 {iscore}）；第 {pl} 层第 {ph} 个头"
        "最关注前一个 token（得分 {ps}）。先预测：删掉哪一个，第二遍上的损失上升得更多？然后运行扫描。",
    "interv.pair.clean": "干净提示词",
    "interv.pair.corrupt": "被破坏的提示词",
    "interv.pair.preview_title": "运行之前：干净提示词和被破坏提示词之后最可能的下一个 token",
    "interv.pair.setup": "干净：“{clean}”→ {correct}。被破坏：“{corrupt}”→ {wrong}。指标：最后一个位置上的 "
        "logit({correct}) − logit({wrong})：干净提示词上是 {clean_diff}，被破坏的提示词上是 "
        "{corrupt_diff}。一次修补恢复的比例是（修补后 − 被破坏）/（干净 − 被破坏）："
        "1 = 干净运行的差值，0 = 被破坏运行的差值。",
    "interv.pair.not_preferred": "在干净提示词上，模型并不更偏向 {correct} 而不是 {wrong}（差值 {diff}）："
        "没有多少答案可追踪，下面的比例意义不大。",
    "interv.pair.no_gap": "干净提示词和被破坏的提示词给出相同的 logit 差值（{diff}）：没有可恢复的东西，"
        "下面的每个比例都没有定义。",
    "interv.own.clean": "干净提示词",
    "interv.own.corrupt": "被破坏的提示词（token 数相同）",
    "interv.own.correct": "干净答案（一个 token，带前导空格）",
    "interv.own.wrong": "被破坏的答案（一个 token）",
    "interv.own.tokens": "干净：{clean_n} 个 token · 被破坏：{corrupt_n} 个 token。",
    "interv.check.empty": "有一个提示词是空的：两个提示词都要写点内容。",
    "interv.check.length": "两个提示词的 token 数不同（{a} 和 {b}）：逐位置修补需要长度相同。请改一个词，"
        "直到两者的 token 数一样。",
    "interv.check.same_prompt": "两个提示词的 token 完全相同：请改动被破坏提示词里的一个词。",
    "interv.check.answer_tokens": "每个答案必须正好是一个 token：{correct} 是 {ca} 个 token，{wrong} 是 {wa} 个。",
    "interv.check.same_answer": "两个答案是同一个 token：请选两个不同的答案。",
    "interv.no_tokenizer": "这个实验需要分词器（它的提示词是文本）；侧栏的输入是随机 token id。请把输入切换为文本，"
        "或选择归纳实验。",
    "interv.res.map_title": "从干净运行修补 hook_resid_pre 后恢复的 logit 差值比例（点击格子）",
    "interv.res.x": "位置（token）",
    "interv.res.unit": "恢复比例",
    "interv.res.carried": "修补 {token}（位置 {pos}，两个提示词不同之处）从第 1 层到第 {until} 层都能恢复至少一半的差值；"
        "修补最后一个位置 {last} 则从第 {start} 层起能做到。",
    "interv.res.carried_only": "修补 {token}（位置 {pos}，两个提示词不同之处）直到第 {until} 层都能恢复至少一半的差值；"
        "修补最后一个位置始终做不到。",
    "interv.res.none": "没有哪一次单独的（层，位置）修补能恢复一半的差值；最大的是 {best}，在第 {layer} 层位置 {pos} "
        "{token}。",
    "interv.res.best": "恢复最多的是 {best}，在第 {layer} 层位置 {pos} {token}。",
    "interv.heads.title": "从干净运行修补单个头的输出（hook_z）后恢复的比例，第 {layers} 层（点击格子）",
    "interv.heads.x": "头",
    "interv.heads.sentence": "在第 {layers} 层（修补最后一个位置时收益最大的几层）中，修补第 {layer} 层第 {head} 个头"
        "恢复 {best}；这些层里其他任何头都不超过 {runner}。",
    "interv.heads.none": "在第 {layers} 层中，没有哪个单独的头能恢复任何东西：最大的是 {best}。",
    "interv.layer_axis": "层",
    "interv.head_axis": "头",
    "interv.ba.ablation": "改变了什么：删掉第 {layer} 层第 {head} 个头",
    "interv.ba.patch": "改变了什么：从干净运行修补第 {layer} 层位置 {pos} {token}",
    "interv.ba.head_patch": "改变了什么：从干净运行修补第 {layer} 层第 {head} 个头的输出",
    "interv.ba.watch_layer": "查看注意力模式：层",
    "interv.ba.watch_head": "头",
    "interv.ba.position": "预测哪个位置之后的 token",
    "interv.ba.before": "干预前",
    "interv.ba.after": "干预后",
    "interv.ba.pattern_title": "第 {layer} 层第 {head} 个头，{when}",
    "interv.ba.same": "这个头的模式不可能改变：它在第 {layer} 层的干预之前就算好了（干预只改变它之后的东西）。",
    "interv.ba.changed": "这个头的模式变化最大处：{delta}（查询 {q}，键 {k}）；在第二遍的查询行上，它放在待复制 token 上的"
        "权重平均从 {b} 变为 {a}。",
    "interv.ba.changed_plain": "这个头的模式变化最大处：{delta}（查询 {q}，键 {k}）。",
    "interv.ba.tokens_title": "位置 {pos} {token} 之后最可能的下一个 token：干预前后的概率",
    "interv.ba.prob": "概率",
    "interv.ba.top": "干预前最可能的下一个 token 是 {before}（{pb}）；干预后是 {after}（{pa}）。",
    "interv.ba.target": "正确的下一个 token {token} 的概率从 {b} 变为 {a}。",
    "interv.ba.pair": "{correct} 从 {cb} 变为 {ca}，{wrong} 从 {wb} 变为 {wa}。",
    "interv.x": "键（被关注的 token）",
    "interv.y": "查询",
    "interv.unit_prob": "权重",
}
