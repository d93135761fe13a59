"""Training lab page."""

EN = {
    "train.title": "Training lab: watch a small model learn",
    "train.explain": "Start trains a copy of the sidebar model to predict the next token of the bundled corpus: the "
                     "loss starts near ln V (a uniform guess) and falls, and the gradient map shows how hard each "
                     "block is being pulled at each step. When the run ends, the trained model becomes the sidebar's "
                     "model, and the before/after view compares attention and per-position loss on your input text. "
                     "Trained on the Tang poems, it learns where “，” and “。” go; the race trains Pre-Norm and "
                     "Post-Norm from the same weights on the same batches.",
    "train.checkpoint": "The Training lab trains models built from the sidebar's sliders (or continues one trained in "
                        "this session). A loaded checkpoint is not trained here: switch the sidebar's model to "
                        "“random init (sliders)” to use this page.",
    "train.use_sliders": "Train the sliders' model instead",
    "train.checkpoint_cost": "Why not this model: it has {params} parameters ({weights} GiB of float32 weights). Training "
                             "it would hold about {extra} GiB more for this session alone (a gradient and Adam's two "
                             "moments: 12 bytes per parameter), and every step would run all {layers} blocks forward "
                             "and backward on the server's CPU, which every other user shares.",
    "train.corpus.label": "Training text",
    "train.corpus.help": "The bundled corpus, tokenized with the same BPE the other pages use at this vocabulary size. "
                         "The last 10 % is held out for the validation loss.",
    "train.corpus.zh": "Tang poems (中文)",
    "train.corpus.en": "English prose",
    "train.corpus.all": "both",
    "train.view.label": "Section",
    "train.view.lab": "Train",
    "train.view.race": "Pre vs Post race",
    "train.encoding": "Encoding the {corpus} text with the {size}-token BPE…",
    "train.corpus_tokens": "{corpus}: {n} tokens with the {size}-token BPE.",
    "train.seconds": "{s} s",
    # ---- lab controls ----
    "train.source.random": "the random-init model from the sliders",
    "train.source.trained": "the model trained in this session (training continues from it)",
    "train.settings": "Training settings (steps, learning rate, batch, sequence length)",
    "train.what": "Start trains a **copy** of {what}: {params} parameters, L = {L} layers, H = {H}, V = {V}, {placement}. "
                  "The shared model itself is never changed.",
    "train.steps.label": "Steps",
    "train.steps.help": "Number of AdamW updates. Each update uses one batch of random windows from the training text.",
    "train.warmup.label": "Warmup steps",
    "train.warmup.help": "With W warmup steps, update k = 1 … W uses peak × k ÷ W: the rate rises linearly but never "
                         "starts at 0. At the current settings (peak {peak}, W = {w}) update 1 uses {first} and update "
                         "{w} the peak. After that a cosine takes it down to {floor} of the peak at the last update. "
                         "0 switches warmup off: the cosine then starts from the peak at once.",
    "train.warmup.help_off": "With W warmup steps, update k = 1 … W uses peak × k ÷ W: the rate rises linearly but never "
                             "starts at 0. Warmup is off now (W = {w}): the cosine starts from the peak {peak} at once, so "
                             "update 1 uses {first}, and it reaches {floor} of the peak at the last update.",
    "train.lr.label": "Learning rate (peak)",
    "train.lr.help": "Peak step size of AdamW (betas 0.9 / 0.95).",
    "train.batch.label": "Batch size",
    "train.batch.help": "Windows per update.",
    "train.seq_len.label": "Sequence length",
    "train.seq_len.help": "Tokens per window (at most the model's position limit, {limit}).",
    "train.fixed": "Fixed: weight decay {wd} on the block matrices, gradient clipping at norm {clip}, validation on the "
                   "last {val} of the text.",
    "train.bad_settings": "These settings cannot be used: {error}",
    "train.too_short": "The text has only {n} tokens; windows of {seq} tokens barely fit. Choose a shorter sequence "
                       "length or more text.",
    "train.start": "▶ Start",
    "train.stop": "■ Stop",
    "train.not_started": "No run yet in this session. Press Start: this run is about {work} of work. Its time left is "
                         "measured from its own latest steps and validations once it runs (other students' runs "
                         "share the server), and includes measuring what it learned after the last step.",
    "train.race_running": "A Pre-vs-Post race is running (see the race section); Start is available when it ends.",
    "train.train_running": "A training run is in progress (see the Train section); the race can start when it ends.",
    # ---- live panel ----
    "train.progress": "Step {step} / {total} · {elapsed} elapsed · about {eta} left",
    "train.stopping": "Stopping… the step in progress is the last one ({step} done).",
    "train.phase.final_eval": "Stopped at step {done} of {total} · measuring the final validation loss · {left}",
    "train.phase.after": "Step {done} / {total} · all steps done · measuring what the model learned about the poems · "
                         "{left}",
    "train.phase.after_stopped": "Stopped at step {done} of {total} · measuring what the model learned about the "
                                 "poems · {left}",
    "train.left": "about {eta} left",
    "train.left_late": "taking longer than estimated, {over} so far",
    "train.cancelled": "Stopped before it started: the run left the line at once and never trained, so there is no "
                       "trained model.",
    "train.run_lost": "The run named in this page's address (started {ago} ago) was lost: the server was restarted "
                      "while it ran, around step {step} of {total}, and nothing of it was kept. Press Start to run it "
                      "again (“Restore its settings” puts its settings back first).",
    "train.run_closed": "The run named in this page's address (started {ago} ago) stopped at step {step} of {total} "
                        "when its tab was closed or reloaded: a run lasts only as long as its tab. Press Start to "
                        "run it again.",
    "train.run_ended": "The run named in this page's address (started {ago} ago, {step} of {total} steps) has ended, "
                       "but its results were kept only in the browser session that ran it, which has ended since "
                       "(a reload or a closed tab ends it). Press Start to run it again.",
    "train.run_restore": "↺ Restore its settings",
    "train.first_step": "Preparing the first step (measuring the validation loss at initialisation)…",
    "train.live_numbers": "Last step: training loss {loss} nats · learning rate {lr} · gradient norm {gnorm} · "
                          "{tps} tokens/s",
    "train.loss_title": "Loss per step",
    "train.step_x": "step",
    "train.loss_y": "loss (nats per token)",
    "train.train_loss": "training batch",
    "train.val_loss": "validation",
    "train.val_short": "(validation)",
    "train.uniform": "uniform guess ln V",
    "train.grad_title": "Gradient L2 norm of each block per step (log colour)",
    "train.block_y": "block",
    "train.grad_unit": "L2 norm",
    # ---- results ----
    "train.results_title": "Result",
    "train.finished": "Finished all {total} steps.",
    "train.stopped_at": "Stopped after {done} of {total} steps.",
    "train.summary": "Validation loss {v0} → {v1} nats in {secs} on the {corpus} text.",
    "train.published": "The trained model is now the sidebar's model (“trained in this session”): every page shows it. "
                       "Press Start again to continue training it, or switch the sidebar back to “random init” to start "
                       "from scratch.",
    "train.published_other": "This run's model is kept as “trained in this session”; choose it in the sidebar to see "
                             "it on every page.",
    "train.failed": "The run failed: {error}",
    "train.no_steps": "The run was stopped before its first update, so there is no trained model.",
    "train.loss_caption": "The dotted line is ln V = {lnv} nats for V = {v}: the loss of a model that gives every token "
                          "the same probability. The validation loss is measured on the same held-out batches every "
                          "time, so its points are comparable.",
    "train.grad_caption": "Gradient norms are measured before clipping (the global norm is then clipped to 1.0). Brighter "
                          "means a larger gradient; a block that stays dark receives little training signal.",
    # ---- before / after ----
    "train.ba_title": "Before and after: your input text",
    "train.ba_caption": "Left: the copy taken before training. Right: the trained model. Both read the sidebar's input.",
    "train.ba_short": "The before/after view needs at least two input tokens (a loss needs a next token).",
    "train.ba_mismatch": "The sidebar's input was tokenized for a different vocabulary than the trained model's "
                         "(V = {v}); set the sidebar back to that vocabulary to compare.",
    "train.ba_capped": "Only the first {n} of {total} tokens are drawn.",
    "train.ba_computing": "Running both models on the input…",
    "train.layer": "Layer",
    "train.head": "Head",
    "train.ba_attn_init": "Before training: attention of layer {layer}, head {head}",
    "train.ba_attn_trained": "After training: attention of layer {layer}, head {head}",
    "train.key_x": "key position (attended to)",
    "train.query_y": "query position",
    "train.prob_unit": "probability",
    "train.ba_loss_init": "Mean loss before training",
    "train.ba_loss_trained": "Mean loss after training",
    "train.ba_bar_init": "Before: each position's share ℓₜ / N of the mean loss",
    "train.ba_bar_trained": "After: each position's share ℓₜ / N of the mean loss",
    "train.pos_x": "position: input → target",
    "train.contrib_y": "ℓₜ / N (nats)",
    "train.ba_loss_caption": "Mean loss = the average of ℓₜ over every predicted token of the sidebar's input: N = {n} "
                             "targets (tokens 2 … {total}), the same mean the Loss page shows with nothing masked. Both "
                             "charts use the same y range and the bars of each add up to its mean loss. Lower bars after "
                             "training mean the model now expects those tokens.",
    # ---- what the model learned ----
    "train.learned_title": "What the model learned about the poems",
    "train.learned_computing": "Measuring the punctuation and the attention heads on the poems…",
    "train.learned_punct": "At this vocabulary size “，” and “。” are not tokens of their own, so the punctuation probe "
                           "cannot run. Use a vocabulary of at least a few hundred tokens.",
    "train.learned_failed": "The poem probe cannot run on this model: {error}",
    "train.learned_zh_only": "The poem probes (punctuation, line-to-line attention) run after training on the Tang poems.",
    "train.comma_metric": "p(“，”) after the 5th character",
    "train.period_metric": "p(“。”) after the 10th character",
    "train.uniform_metric": "uniform guess 1 / V",
    "train.vs_init": "before training: {init}",
    "train.comma_help": "Mean over the 5-character lines of the corpus (mostly training text) of the probability the "
                        "model gives “，” right after a line's 5th character.",
    "train.period_help": "Same for “。” right after the 10th character.",
    "train.uniform_help": "What a model that knows nothing gives every token: 1 / {v}.",
    "train.poem_learned": "After training the model gives “，” a probability of **{comma}** right after the 5th character "
                          "and “。” **{period}** after the 10th (before training: {comma0} and {period0}). That is well "
                          "above how common they are in the poems ({fc} and {fp} of all tokens), so the model has learned "
                          "where in a line they go: two halves of five characters. Averaged over {n} lines, {ctx} tokens "
                          "of context each.",
    "train.poem_frequency": "After training the model gives “，” {comma} right after the 5th character and “。” {period} "
                            "after the 10th (before training: {comma0} and {period0}). That is about how common they "
                            "are in the poems overall ({fc} and {fp} of all tokens): the model has learned that "
                            "punctuation is frequent, but not yet clearly where in a line it goes. Train longer to see "
                            "it learn the five-character halves. Averaged over {n} lines, {ctx} tokens of context each.",
    "train.poem_not_yet": "The model gives “，” {comma} after the 5th character and “。” {period} after the 10th (before "
                          "training: {comma0} and {period0}; share among all tokens: {fc} and {fp}): not yet clearly "
                          "above the untrained model. Train longer or with a higher learning rate. Averaged over {n} "
                          "lines, {ctx} tokens of context each.",
    "train.poem_caption": "The lines are mostly training text (the held-out end of the corpus has almost no 5-character "
                          "lines), so read this as “learned on the training text”; the punctuation pattern is a "
                          "regularity, not a memorised fact.",
    "train.slot_title": "Attention to the same slot of the previous line, per layer and head",
    "train.head_x": "head",
    "train.layer_y": "layer",
    "train.slot_top": "strongest",
    "train.slot_sentence": "Strongest: layer {layer}, head {head}, with {score} of its attention on the character in the "
                           "same slot one line up (13 tokens back), averaged over {pairs} positions of a poem. Spread "
                           "evenly over the visible tokens it would get about {uniform}; the strongest head before "
                           "training had {init}.",
    "train.slot_none": "No head stands out yet: the strongest, layer {layer}, head {head}, puts {score} of its attention "
                       "on the same slot one line up (13 tokens back), averaged over {pairs} positions of a poem: not clearly "
                       "more than the {uniform} of evenly spread attention or the {init} of the strongest head before "
                       "training.",
    "train.slot_window": "The poem window used",
}

ZH = {
    "train.title": "训练实验室：看一个小模型如何学习",
    "train.explain": "点击“开始”会训练侧边栏模型的一个副本，让它预测内置语料的下一个 token：损失从 ln V（均匀猜测）附近开始"
                     "下降，梯度图显示每一步各个 Block 受到多大的训练信号。训练结束后，训练好的模型成为侧边栏的模型，"
                     "“训练前后”部分对比你输入文本上的注意力和逐位置损失。在唐诗上训练后，模型会学到“，”和“。”的位置；"
                     "“竞赛”部分则让 Pre-Norm 与 Post-Norm 从同一组权重出发、在同样的批次上训练。",
    "train.use_sliders": "改为训练滑块构建的模型",
    "train.checkpoint": "训练实验室只训练由侧边栏滑块构建的模型（或继续训练本会话中训练过的模型），不在这里训练已加载的检查点。"
                        "请把侧边栏的模型切换为“随机初始化（滑块）”后再使用本页。",
    "train.checkpoint_cost": "为什么不训练这个模型：它有 {params} 个参数（单精度浮点（float32）权重共 {weights} GiB）。训练它仅这一个会话就要"
                             "再占用约 {extra} GiB 内存（每个参数一份梯度和 Adam 的两个动量：每个参数 12 字节），而且每一步都要在"
                             "服务器的 CPU 上把全部 {layers} 个块前向、反向各算一遍，而这颗 CPU 是所有用户共用的。",
    "train.corpus.label": "训练文本",
    "train.corpus.help": "内置语料，用其他页面在该词表大小下使用的同一个 BPE 分词。最后 10% 留作验证集。",
    "train.corpus.zh": "唐诗",
    "train.corpus.en": "英文散文",
    "train.corpus.all": "两者",
    "train.view.label": "部分",
    "train.view.lab": "训练",
    "train.view.race": "归一化位置竞赛",
    "train.encoding": "正在用 {size} 个 token 的 BPE 对{corpus}文本分词…",
    "train.corpus_tokens": "{corpus}：用 {size} 个 token 的 BPE 分词后共 {n} 个 token。",
    "train.seconds": "{s} 秒",
    # ---- lab controls ----
    "train.source.random": "滑块构建的随机初始化模型",
    "train.source.trained": "本会话中训练过的模型（在它的基础上继续训练）",
    "train.settings": "训练设置（步数、学习率、批大小、序列长度）",
    "train.what": "“开始”训练的是{what}的**副本**：{params} 个参数，L = {L} 层，H = {H}，V = {V}，{placement}。"
                  "共享的模型本身永远不会被修改。",
    "train.steps.label": "步数",
    "train.steps.help": "AdamW 更新的次数。每次更新使用一个批次、从训练文本中随机截取的窗口。",
    "train.warmup.label": "预热步数",
    "train.warmup.help": "预热步数为 W 时，第 k 次更新（k = 1 … W）的学习率是 峰值 × k ÷ W：线性上升，但不是从 0 开始。"
                         "按当前设置（峰值 {peak}，W = {w}），第 1 次更新用 {first}，第 {w} 次更新达到峰值。"
                         "之后按余弦曲线在最后一次更新时降到峰值的 {floor}。设为 0 即关闭预热：余弦衰减直接从峰值开始。",
    "train.warmup.help_off": "预热步数为 W 时，第 k 次更新（k = 1 … W）的学习率是 峰值 × k ÷ W：线性上升，但不是从 0 开始。"
                             "现在预热已关闭（W = {w}）：余弦衰减直接从峰值 {peak} 开始，所以第 1 次更新用 {first}，"
                             "最后一次更新时降到峰值的 {floor}。",
    "train.lr.label": "学习率（峰值）",
    "train.lr.help": "AdamW 的峰值步长（动量系数 betas 0.9 / 0.95）。",
    "train.batch.label": "批大小",
    "train.batch.help": "每次更新使用的窗口数。",
    "train.seq_len.label": "序列长度",
    "train.seq_len.help": "每个窗口的 token 数（不超过模型的位置上限 {limit}）。",
    "train.fixed": "固定设置：对 Block 内的矩阵使用权重衰减 {wd}，梯度裁剪到范数 {clip}，用文本最后 {val} 计算验证损失。",
    "train.bad_settings": "这些设置无法使用：{error}",
    "train.too_short": "文本只有 {n} 个 token，放不下足够多 {seq} 个 token 的窗口。请选更短的序列长度或更多文本。",
    "train.start": "▶ 开始",
    "train.stop": "■ 停止",
    "train.not_started": "本会话还没有训练过。点击“开始”：这次训练的计算量约为 {work}。开始运行后，剩余时间按它自己最近几步和最近几次验证的实际速度估算（其他同学的训练也在共用这台服务器），并包括最后一步之后测量它学到了什么所需的时间。",
    "train.race_running": "Pre-Norm 与 Post-Norm 竞赛正在进行（见竞赛部分）；结束后才能开始训练。",
    "train.train_running": "训练正在进行（见训练部分）；结束后才能开始竞赛。",
    # ---- live panel ----
    "train.progress": "第 {step} / {total} 步 · 已用 {elapsed} · 约剩 {eta}",
    "train.stopping": "正在停止……正在进行的这一步是最后一步（已完成 {step} 步）。",
    "train.phase.final_eval": "已在第 {done} / {total} 步停止 · 正在测量最终的验证损失 · {left}",
    "train.phase.after": "第 {done} / {total} 步 · 训练已全部完成 · 正在测量模型从诗里学到了什么 · {left}",
    "train.phase.after_stopped": "已在第 {done} / {total} 步停止 · 正在测量模型从诗里学到了什么 · {left}",
    "train.left": "约剩 {eta}",
    "train.left_late": "比预计的久，已用 {over}",
    "train.cancelled": "在开始之前就已停止：这次训练立刻离开了队列，一步也没有训练，因此没有训练好的模型。",
    "train.run_lost": "本页地址里记录的那次训练（{ago}前开始）已经丢失：它运行到大约第 {step} / {total} 步时服务器重启了，"
                      "什么都没有保留下来。点击“开始”重新训练（先点“恢复它的设置”可以把当时的设置填回来）。",
    "train.run_closed": "本页地址里记录的那次训练（{ago}前开始）在第 {step} / {total} 步时停止了，因为它的标签页被关闭或刷新："
                        "训练只在它的标签页打开期间运行。点击“开始”重新训练。",
    "train.run_ended": "本页地址里记录的那次训练（{ago}前开始，完成 {step} / {total} 步）已经结束，但结果只保存在运行它的那个"
                       "浏览器会话里，而那个会话已经结束了（刷新或关闭标签页都会结束会话）。点击“开始”重新训练。",
    "train.run_restore": "↺ 恢复它的设置",
    "train.first_step": "正在准备第一步（先测量初始化时的验证损失）…",
    "train.live_numbers": "最近一步：训练损失 {loss} 奈特 · 学习率 {lr} · 梯度范数 {gnorm} · 每秒 {tps} 个 token",
    "train.loss_title": "每一步的损失",
    "train.step_x": "步",
    "train.loss_y": "损失（每个 token 的奈特数）",
    "train.train_loss": "训练批次",
    "train.val_loss": "验证集",
    "train.val_short": "（验证集）",
    "train.uniform": "均匀猜测 ln V",
    "train.grad_title": "每一步各 Block 的梯度 L2 范数（对数色标）",
    "train.block_y": "Block",
    "train.grad_unit": "L2 范数",
    # ---- results ----
    "train.results_title": "结果",
    "train.finished": "已完成全部 {total} 步。",
    "train.stopped_at": "在 {total} 步中的第 {done} 步后停止。",
    "train.summary": "在{corpus}文本上用时 {secs}，验证损失 {v0} → {v1} 奈特。",
    "train.published": "训练好的模型现在是侧边栏的模型（“本会话中训练的模型”）：所有页面都显示它。再次点击“开始”会在它的基础上"
                       "继续训练；若要从头开始，请把侧边栏切回“随机初始化”。",
    "train.published_other": "这次训练的模型保存在“本会话中训练的模型”中；在侧边栏选择它，即可在所有页面查看。",
    "train.failed": "训练失败：{error}",
    "train.no_steps": "训练在第一次更新之前就被停止了，因此没有训练好的模型。",
    "train.loss_caption": "点线是 ln V = {lnv} 奈特（V = {v}）：给每个 token 相同概率的模型的损失。验证损失每次都在同一批留出数据"
                          "上测量，所以各点可以互相比较。",
    "train.grad_caption": "梯度范数在裁剪之前测量（之后全局范数被裁剪到 1.0）。颜色越亮表示梯度越大；一直偏暗的 Block 得到的训练信号很少。",
    # ---- before / after ----
    "train.ba_title": "训练前后：你的输入文本",
    "train.ba_caption": "左：训练前取下的副本。右：训练后的模型。两者读取的都是侧边栏的输入。",
    "train.ba_short": "训练前后的对比至少需要两个输入 token（损失需要下一个 token）。",
    "train.ba_mismatch": "侧边栏的输入是按另一个词表分词的，与训练模型的词表（V = {v}）不同；把侧边栏的词表大小改回去即可对比。",
    "train.ba_capped": "只绘制 {total} 个 token 中的前 {n} 个。",
    "train.ba_computing": "正在用两个模型处理输入…",
    "train.layer": "层",
    "train.head": "头",
    "train.ba_attn_init": "训练前：第 {layer} 层第 {head} 个头的注意力",
    "train.ba_attn_trained": "训练后：第 {layer} 层第 {head} 个头的注意力",
    "train.key_x": "键位置（被关注的位置）",
    "train.query_y": "查询位置",
    "train.prob_unit": "概率",
    "train.ba_loss_init": "训练前的平均损失",
    "train.ba_loss_trained": "训练后的平均损失",
    "train.ba_bar_init": "训练前：各位置在平均损失中所占的 ℓₜ / N",
    "train.ba_bar_trained": "训练后：各位置在平均损失中所占的 ℓₜ / N",
    "train.pos_x": "位置：输入 → 目标",
    "train.contrib_y": "ℓₜ / N（奈特）",
    "train.ba_loss_caption": "平均损失 = 侧边栏输入中每个被预测 token 的 ℓₜ 的平均：N = {n} 个目标（第 2 … {total} 个 "
                             "token），与“损失”页在不遮盖任何位置时显示的平均值相同。两张图的纵轴范围相同，每张图的柱子"
                             "相加等于它的平均损失。训练后柱子变低，说明模型现在能预料到这些 token。",
    # ---- what the model learned ----
    "train.learned_title": "模型从唐诗中学到了什么",
    "train.learned_computing": "正在测量标点概率和各注意力头…",
    "train.learned_punct": "在这个词表大小下，“，”和“。”不是独立的 token，无法测量标点。请使用至少几百个 token 的词表。",
    "train.learned_failed": "无法在这个模型上运行唐诗探针：{error}",
    "train.learned_zh_only": "在唐诗上训练之后，这里会显示唐诗探针（标点位置、上下句之间的注意力）。",
    "train.comma_metric": "第 5 个字之后 p(“，”)",
    "train.period_metric": "第 10 个字之后 p(“。”)",
    "train.uniform_metric": "均匀猜测 1 / V",
    "train.vs_init": "训练前：{init}",
    "train.comma_help": "对语料中所有五言诗句（大多是训练文本）取平均：模型在一句的第 5 个字之后给“，”的概率。",
    "train.period_help": "同上，第 10 个字之后给“。”的概率。",
    "train.uniform_help": "一无所知的模型给每个 token 的概率：1 / {v}。",
    "train.poem_learned": "训练后，模型在第 5 个字之后给“，”的概率是 **{comma}**，在第 10 个字之后给“。”的概率是 **{period}**"
                          "（训练前分别为 {comma0} 和 {period0}）。这远高于它们在唐诗中出现的比例（占全部 token 的 {fc} 和 "
                          "{fp}），说明模型学会了它们在句中的位置：每句由两个五字的半句组成。对 {n} 句取平均，每句使用 {ctx} "
                          "个 token 的上下文。",
    "train.poem_frequency": "训练后，模型在第 5 个字之后给“，”的概率是 {comma}，在第 10 个字之后给“。”的概率是 {period}（训练前"
                            "分别为 {comma0} 和 {period0}）。这大约就是它们在唐诗中出现的比例（占全部 token 的 {fc} 和 {fp}）："
                            "模型学会了标点很常见，但还没有明确学会标点在句中的位置。训练更久，就能看到它学会五字半句。对 {n} "
                            "句取平均，每句使用 {ctx} 个 token 的上下文。",
    "train.poem_not_yet": "模型在第 5 个字之后给“，”的概率是 {comma}，在第 10 个字之后给“。”的概率是 {period}（训练前分别为 "
                          "{comma0} 和 {period0}；在全部 token 中的占比为 {fc} 和 {fp}）：还没有明显高于未训练的模型。请训练更久"
                          "或提高学习率。对 {n} 句取平均，每句使用 {ctx} 个 token 的上下文。",
    "train.poem_caption": "这些诗句大多属于训练文本（语料末尾留出的部分几乎没有五言句），所以这里表示“在训练文本上学到的”；"
                          "标点的位置是一种规律，而不是死记硬背的事实。",
    "train.slot_title": "各层各头对上一句同一位置的注意力",
    "train.head_x": "头",
    "train.layer_y": "层",
    "train.slot_top": "最强",
    "train.slot_sentence": "最强的是第 {layer} 层第 {head} 个头：在一首诗的 {pairs} 个位置上平均，它把 {score} 的注意力放在上一句"
                           "同一位置的字上（往回 13 个 token）。如果注意力平均分给所有可见的 token，约为 {uniform}；训练前最强的"
                           "头为 {init}。",
    "train.slot_none": "还没有哪个头特别突出：最强的是第 {layer} 层第 {head} 个头，在一首诗的 {pairs} 个位置上平均，它把 {score} "
                       "的注意力放在上一句同一位置的字上（往回 13 个 token）：没有明显超过注意力平均分配时的 {uniform}，也没有明显超过"
                       "训练前最强的头（{init}）。",
    "train.slot_window": "所用的诗歌片段",
}
