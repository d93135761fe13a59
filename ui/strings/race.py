"""Pre-Norm vs Post-Norm race (the Training lab's second section)."""

EN = {
    "race.title": "Pre-Norm vs Post-Norm race",
    "race.intro": "Both models start from **the same initial weights** and see **the same batches** ({batch} "
                        "windows of {seq} tokens per step); only the norm placement differs. They take turns, one "
                        "update each.",
    "race.depth.label": "Blocks (depth)",
    "race.depth.help": "The race builds two fresh models from the sidebar's settings with this many blocks.",
    "race.steps.label": "Steps",
    "race.steps.help": "Updates per model: each step updates Pre-Norm, then Post-Norm, on the same batch.",
    "race.not_started": "No race yet in this session. Press Start race: this race is about {work} of work (both "
                        "models). Its time left is measured from its own latest steps once it runs (other students' "
                        "runs share the server).",
    "race.lr.label": "Learning rate (peak)",
    "race.warmup.label": "Warmup",
    "race.warmup.help": "On: update 1 uses peak ÷ {n} and the rate rises linearly to the peak at update {n}. "
                              "Off: the cosine decay starts from the peak at once (Xiong et al. 2020: Post-Norm is the one "
                              "that needs warmup).",
    "race.model": "Race model: {depth} blocks, H = {H}, V = {V}, init seed {seed}, warmup {warm} steps.",
    "race.start": "▶ Start race",
    "race.expect": "What to expect at the defaults (12 blocks, 100 steps; measured here with init seeds 0, 1 and 2, "
                         "warmup on and off): averaged over the run, Post-Norm's gradient norm grows from block 2 to "
                         "block 12, by a factor of about 60 without warmup and about 28 with it, while Pre-Norm's falls "
                         "from block 1 to block 12 (to 0.02–0.11 of block 1). Post-Norm's block 1, which reads the small "
                         "embeddings directly, stands apart with larger gradients than blocks 2 to 8. At the very first "
                         "step Post-Norm's blocks 2 to 12 all have the same gradient norm: the growth appears once "
                         "training starts. Pre-Norm also ended with the lower validation loss in all six runs.",
    "race.loss_title": "Loss per step, both placements",
    "race.grad_title": "Gradient L2 norm of each block per step (one log colour scale for both)",
    "race.results": "Result: {depth} blocks, {steps} steps, warmup {warm} steps",
    "race.profile_title": "Gradient L2 norm of each block, averaged over the steps",
    "race.block_x": "block",
    "race.profile_y": "mean gradient L2 norm (log scale)",
    "race.losses": "Validation loss: Pre-Norm {pre0} → **{pre1}** nats, Post-Norm {post0} → **{post1}** nats.",
    "race.ratios": "Mean gradient norm per block over the run:",
    "race.as_expected": "This run shows the pattern described above: from block 2 to block {L}, Post-Norm's "
                              "gradients grow towards the output and Pre-Norm's shrink.",
    "race.not_this_time": "This run does not show the usual pattern (from block 2 to block {L}, Post-Norm's "
                                "gradients growing and Pre-Norm's shrinking, by the rule of the sentences above). Short "
                                "runs, shallow models and other settings can differ; the charts show what happened.",
    "race.shallow": "With fewer than three blocks there is no depth profile to compare; raise the depth.",
    "race.nonfinite": "Some gradient norms are zero or not finite (NaN/Inf), so no ratio is given; the learning "
                            "rate is probably too high for this depth.",
}

ZH = {
    "race.title": "Pre-Norm 与 Post-Norm 竞赛",
    "race.intro": "两个模型从**同一组初始权重**出发，看到**同样的批次**（每步 {batch} 个 {seq} token 的窗口），只有归一化的"
                        "位置不同。它们轮流各做一次更新。",
    "race.depth.label": "Block 数（深度）",
    "race.depth.help": "竞赛用侧边栏的设置和这个 Block 数新建两个模型。",
    "race.steps.label": "步数",
    "race.steps.help": "每个模型的更新次数：每一步先更新 Pre-Norm、再更新 Post-Norm，用的是同一个批次。",
    "race.not_started": "本会话还没有运行过竞赛。点击“开始竞赛”：这次竞赛（两个模型）的计算量约为 {work}。"
                        "开始运行后，剩余时间按它自己最近几步的实际速度估算（其他同学的训练也在共用这台服务器）。",
    "race.lr.label": "学习率（峰值）",
    "race.warmup.label": "预热",
    "race.warmup.help": "开：第 1 次更新用 峰值 ÷ {n}，学习率线性上升，在第 {n} 次更新达到峰值。"
                              "关：余弦衰减直接从峰值开始（Xiong 等 2020：需要预热的是 Post-Norm）。",
    "race.model": "竞赛模型：{depth} 个 Block，H = {H}，V = {V}，初始化种子 {seed}，预热 {warm} 步。",
    "race.start": "▶ 开始竞赛",
    "race.expect": "默认设置下应看到的现象（12 个 Block、100 步；在这里用初始化种子 0、1、2，开与关预热都测量过）：对整个"
                         "训练过程取平均，Post-Norm 的梯度范数从第 2 个 Block 到第 12 个 Block 逐渐增大，不预热时约增大 60 倍，"
                         "预热时约 28 倍；而 Pre-Norm 的从第 1 个 Block 到第 12 个逐渐减小（降到第 1 个 Block 的 0.02–0.11）。"
                         "Post-Norm 的第 1 个 Block 直接读取很小的嵌入，梯度比第 2 到第 8 个 Block 大，自成一类。在第一步时，"
                         "Post-Norm 的第 2 到第 12 个 Block 梯度范数完全相同：增长是在训练开始后才出现的。在这六次运行中，"
                         "Pre-Norm 的最终验证损失也都更低。",
    "race.loss_title": "两种放置方式每一步的损失",
    "race.grad_title": "每一步各 Block 的梯度 L2 范数（两图共用一个对数色标）",
    "race.results": "结果：{depth} 个 Block，{steps} 步，预热 {warm} 步",
    "race.profile_title": "各 Block 的梯度 L2 范数（对所有步取平均）",
    "race.block_x": "Block",
    "race.profile_y": "平均梯度 L2 范数（对数坐标）",
    "race.losses": "验证损失：Pre-Norm {pre0} → **{pre1}** 奈特，Post-Norm {post0} → **{post1}** 奈特。",
    "race.ratios": "整个运行中各 Block 的平均梯度范数：",
    "race.as_expected": "这次运行呈现了上面描述的规律：从第 2 个到第 {L} 个 Block，Post-Norm 的梯度向输出端增大，"
                              "Pre-Norm 的则减小。",
    "race.not_this_time": "这次运行没有呈现通常的规律（按上面句子的同一规则：从第 2 个到第 {L} 个 Block，Post-Norm "
                                "的梯度增大而 Pre-Norm 的减小）。训练步数少、模型浅或其他设置都可能导致不同结果；图表显示的是实际发生的情况。",
    "race.shallow": "少于三个 Block 时没有可比较的深度分布；请增加深度。",
    "race.nonfinite": "部分梯度范数为零或不是有限数（NaN/Inf），因此不给出比值；对这个深度来说学习率可能太高了。",
}
