"""RoPE up close page."""

EN = {
    "rope.title": "RoPE up close: positions as rotations",
    "rope.explain": "RoPE (Su et al. 2021) adds no position vector: it turns q and k. A head's d dimensions form "
                    "d/2 planes (dimension i with dimension i + d/2); at position m plane i is turned by the angle "
                    "m·θ_i, with θ_i = θ^(−2i/d) for the base θ (`rope_theta`). Plane 0 turns one radian per "
                    "token, the last plane hardly moves. Because q (at m) and k (at n) are both turned, their dot "
                    "product only sees the difference of the angles, (m − n)·θ_i: the score depends on the "
                    "distance, not on where the pair sits. Below: the wavelength of each plane, a measured check of "
                    "that claim, and a real head's score against distance.",
    "rope.no_rope_short": "No RoPE in this model (positions: {position}): shown for θ = {theta}, d = {d}.",
    "rope.no_rope": "This model does not use RoPE (positions: {position}), so its q and k are not rotated. The "
                    "charts show RoPE as it would be with the default base θ = {theta} and head dimension d = {d}; "
                    "a real head's score against distance needs a RoPE model (the Llama-style or a 2025 preset, or "
                    "SmolLM2, in the sidebar).",
    "rope.positions": "Last position P",
    "rope.rotation_title": "A q/k vector's planes at positions 0 … {last} (base θ = {theta}, θ_i in rad/token)",
    "rope.plane_title": "plane {i}<br>θ_{i} = {freq}",
    "rope.position_bar": "position m",
    "rope.rotation_hover": "plane %{customdata[3]}: dimensions %{customdata[3]} and %{customdata[4]}"
                           "<br>position m = %{customdata[0]}<br>angle m·θ_i = %{customdata[1]:.4g} rad"
                           "<br>= %{customdata[2]:.4g} turns",
    "rope.rotation_item": "plane {i}: {angle} rad ({turns} turns)",
    "rope.rotation_sentence": "At position m = {last} each plane has turned by m·θ_i: {items}. The first plane turns "
                              "{ratio} times as fast as the last, which needs {wave} tokens for one full turn: fast "
                              "planes tell neighbouring positions apart, slow ones far-apart positions.",
    "rope.item_sep": "; ",
    "rope.rotation_one": "At position m = {last} the head's only plane has turned by m·θ_0 = {angle} rad ({turns} turns).",
    "rope.yarn": "This model scales its RoPE frequencies (YaRN, factor {factor}, original context {original} "
                 "tokens): every chart uses the engine's own frequencies, the slow planes divided by up to {factor}.",
    "rope.wave_title": "The wavelength of each plane",
    "rope.wave_chart": "Wavelength 2π/θ_i of each of the {half} planes (d = {d})",
    "rope.wave_x": "plane i",
    "rope.wave_y": "wavelength (tokens per full turn, log scale)",
    "rope.base_name": "base θ = {theta}",
    "rope.base_local": "sliding-window layers: base θ = {theta}",
    "rope.context_name": "context length: {n} tokens",
    "rope.input_name": "this input: {n} tokens",
    "rope.wave_hover": "plane %{x}<br>wavelength %{y:,.4g} tokens<br>θ_i = %{customdata[0]:.3g} rad/token"
                       "<br>%{customdata[1]:.3g} turns in the context",
    "rope.wave_long": "With base θ = {theta}, {turning} of the {half} planes turn at least once within the context of "
                      "{context} tokens. The fastest repeats every {fast} tokens, the slowest every {slow} tokens, "
                      "{ratio} times the context: between positions 0 and {last} it turns by {angle} rad ({degrees}°), "
                      "less than one full turn, so its angle never comes round again. Far-apart positions differ in "
                      "it by up to {angle} rad, neighbours by only {step} rad.",
    "rope.wave_still": "With base θ = {theta}, {turning} of the {half} planes turn at least once within the context of "
                       "{context} tokens. The fastest repeats every {fast} tokens, the slowest every {slow} tokens, "
                       "{ratio} times the context: between positions 0 and {last} it turns by only {angle} rad "
                       "({degrees}°). It is nearly constant over the whole context, so it carries almost no position "
                       "signal; positions are told apart by the faster planes.",
    "rope.wave_all": "With base θ = {theta}, all {half} planes turn at least once within the context of {context} "
                     "tokens. The fastest repeats every {fast} tokens, the slowest every {slow} tokens.",
    "rope.local_note": "The sliding-window layers use base θ = {theta}: their slowest plane repeats every {slow} tokens.",
    "rope.check_title": "Does the score depend only on the distance m − n?",
    "rope.check_chart": "Score q_m · k_n of one random unit pair turned to positions m, n = 0 … {last}",
    "rope.check_x": "key position n",
    "rope.check_y": "query position m",
    "rope.check_bar": "score q_m · k_n",
    "rope.check_hover": "m = %{y}, n = %{x}<br>m − n = %{customdata}<br>score %{z:.6f}",
    "rope.check_ok": "Over {pairs} pairs (m, n) at {distances} distances, the scores of pairs at the same distance "
                     "differ by at most {spread} (at m − n = {distance}), while the score ranges over {range} "
                     "from one distance to another: float32 rounding, {share} of that range. Each diagonal of the "
                     "heatmap is one colour: the rotated pair's score depends only on m − n.",
    "rope.check_bad": "Over {pairs} pairs (m, n) at {distances} distances, pairs at the same distance differ by up to "
                      "{spread} (at m − n = {distance}), {share} of the range {range}: more than float32 rounding.",
    "rope.head_title": "A real head: score against the distance m − n",
    "rope.layer": "Layer",
    "rope.head": "Head",
    "rope.head_chart": "Layer {layer}, head {head}: mean score q·k/√d by distance m − n",
    "rope.head_x": "distance m − n (tokens)",
    "rope.head_y": "score q · k / √d",
    "rope.mean_name": "mean over the pairs",
    "rope.band_name": "lowest to highest pair",
    "rope.head_hover": "m − n = %{x}<br>mean score %{y:.3f}<br>%{customdata} pairs",
    "rope.head_sentence": "Layer {layer}, head {head} (RoPE base θ = {theta}, √d = {sqrt_d}, {n} tokens): the mean score is highest at distance {best} ({best_v}) and "
                          "lowest at distance {worst} ({worst_v}); each token with itself (distance 0) scores "
                          "{zero} on average.",
    "rope.head_pairs": "Distance k is the mean of {n} − k pairs of this input, so the far end rests on few pairs "
                       "(the last on one). q and k are the recorded ones, after the rotation.",
    "rope.head_short": "The input has one token, so only distance 0 exists: type a longer text in the sidebar.",
    "rope.head_no_rope": "This model's q and k carry no rotation (positions: {position}), so a real head has no "
                         "RoPE to show: pick the Llama-style or a 2025 preset, or SmolLM2, in the sidebar.",
    "rope.random_head": "Random weights: this head's scores are noise with no preference for any distance. SmolLM2 "
                        "in the sidebar shows trained heads (base θ = 100,000).",
    "rope.trained_head": "Trained for seconds: at most a faint preference for some distances.",
}

ZH = {
    "rope.title": "RoPE 近看：位置就是旋转",
    "rope.explain": "RoPE（Su 等，2021）不加位置向量，而是旋转 q 和 k。一个头的 d 个维度组成 d/2 个平面（第 i 维与第 "
                    "i + d/2 维）；在位置 m，平面 i 转过角度 m·θ_i，其中 θ_i = θ^(−2i/d)，θ 是基数（`rope_theta`）。"
                    "平面 0 每个 token 转 1 弧度，最后一个平面几乎不动。q（位置 m）和 k（位置 n）都被旋转，所以它们的点积"
                    "只看到两个角度之差 (m − n)·θ_i：分数只取决于距离，与这一对 token 所在的位置无关。下面依次是每个平面的"
                    "波长、对这一结论的实测检验，以及一个真实注意力头的分数随距离的变化。",
    "rope.no_rope_short": "当前模型不使用 RoPE（位置编码：{position}）：按 θ = {theta}、d = {d} 展示。",
    "rope.no_rope": "当前模型不使用 RoPE（位置编码：{position}），它的 q 和 k 没有被旋转。下面的图按默认基数 θ = {theta}、"
                    "头维度 d = {d} 展示 RoPE 的样子；真实注意力头的分数随距离的变化需要一个使用 RoPE 的模型"
                    "（在侧边栏选类 Llama 预设或 2025 年的预设，或者 SmolLM2）。",
    "rope.positions": "最后一个位置 P",
    "rope.rotation_title": "一个 q/k 向量的各平面在位置 0 … {last}（基数 θ = {theta}，θ_i 单位：弧度/位置）",
    "rope.plane_title": "平面 {i}<br>θ_{i} = {freq}",
    "rope.position_bar": "位置 m",
    "rope.rotation_hover": "平面 %{customdata[3]}：第 %{customdata[3]} 维与第 %{customdata[4]} 维"
                           "<br>位置 m = %{customdata[0]}<br>角度 m·θ_i = %{customdata[1]:.4g} 弧度"
                           "<br>= %{customdata[2]:.4g} 圈",
    "rope.rotation_item": "平面 {i} 转了 {angle} 弧度（{turns} 圈）",
    "rope.rotation_sentence": "到位置 m = {last}，每个平面都转过了 m·θ_i：{items}。第一个平面的转速是最后一个的 {ratio} "
                              "倍，最后一个平面要 {wave} 个 token 才转满一圈：快的平面区分相邻的位置，慢的平面区分相隔很远的位置。",
    "rope.item_sep": "；",
    "rope.rotation_one": "到位置 m = {last}，这个头唯一的平面转过了 m·θ_0 = {angle} 弧度（{turns} 圈）。",
    "rope.yarn": "当前模型缩放了 RoPE 的频率（缩放倍数 {factor}，原始上下文 {original} 个 token）：每张图都用引擎实际使用"
                 "的频率，慢的平面最多被除以 {factor}。",
    "rope.wave_title": "每个平面的波长",
    "rope.wave_chart": "{half} 个平面各自的波长 2π/θ_i（d = {d}）",
    "rope.wave_x": "平面 i",
    "rope.wave_y": "波长（转一整圈所需的 token 数，对数坐标）",
    "rope.base_name": "基数 θ = {theta}",
    "rope.base_local": "滑动窗口层：基数 θ = {theta}",
    "rope.context_name": "上下文长度：{n} 个 token",
    "rope.input_name": "当前输入：{n} 个 token",
    "rope.wave_hover": "平面 %{x}<br>波长 %{y:,.4g} 个 token<br>θ_i = %{customdata[0]:.3g} 弧度/位置"
                       "<br>上下文内转 %{customdata[1]:.3g} 圈",
    "rope.wave_long": "基数 θ = {theta} 时，{half} 个平面中有 {turning} 个在 {context} 个 token 的上下文内至少转满一圈。"
                      "最快的平面每 {fast} 个 token 重复一次，最慢的每 {slow} 个 token 才重复一次，是上下文长度的 "
                      "{ratio} 倍：从位置 0 到 {last}，它转了 {angle} 弧度（{degrees}°），不到一整圈，所以它的角度在上下文内"
                      "不会转回原处。相隔很远的位置在这个平面上最多相差 {angle} 弧度，相邻位置只差 {step} 弧度。",
    "rope.wave_still": "基数 θ = {theta} 时，{half} 个平面中有 {turning} 个在 {context} 个 token 的上下文内至少转满一圈。"
                       "最快的平面每 {fast} 个 token 重复一次，最慢的每 {slow} 个 token 才重复一次，是上下文长度的 "
                       "{ratio} 倍：从位置 0 到 {last}，它只转了 {angle} 弧度（{degrees}°）。它在整个上下文内几乎不变，"
                       "所以几乎不携带位置信息；区分位置靠的是转得更快的平面。",
    "rope.wave_all": "基数 θ = {theta} 时，全部 {half} 个平面都在 {context} 个 token 的上下文内至少转满一圈。"
                     "最快的平面每 {fast} 个 token 重复一次，最慢的每 {slow} 个 token 重复一次。",
    "rope.local_note": "滑动窗口层使用基数 θ = {theta}：它们最慢的平面每 {slow} 个 token 重复一次。",
    "rope.check_title": "分数是否只取决于距离 m − n？",
    "rope.check_chart": "一对随机单位向量旋转到位置 m、n = 0 … {last} 后的分数 q_m · k_n",
    "rope.check_x": "键的位置 n",
    "rope.check_y": "查询的位置 m",
    "rope.check_bar": "分数 q_m · k_n",
    "rope.check_hover": "m = %{y}，n = %{x}<br>m − n = %{customdata}<br>分数 %{z:.6f}",
    "rope.check_ok": "在 {distances} 个距离上的 {pairs} 对 (m, n) 中，距离相同的各对分数最多相差 {spread}"
                     "（在 m − n = {distance} 处），而分数在不同距离之间的变化范围是 {range}：这只是 float32 的舍入误差，"
                     "占该范围的 {share}。热力图的每条对角线都是同一种颜色：旋转后的分数只取决于 m − n。",
    "rope.check_bad": "在 {distances} 个距离上的 {pairs} 对 (m, n) 中，距离相同的各对分数最多相差 {spread}"
                      "（在 m − n = {distance} 处），占范围 {range} 的 {share}：超出了 float32 的舍入误差。",
    "rope.head_title": "真实注意力头：分数随距离 m − n 的变化",
    "rope.layer": "层",
    "rope.head": "头",
    "rope.head_chart": "第 {layer} 层第 {head} 个头：按距离 m − n 平均的分数 q·k/√d",
    "rope.head_x": "距离 m − n（token 数）",
    "rope.head_y": "分数 q · k / √d",
    "rope.mean_name": "各对的平均",
    "rope.band_name": "最低到最高的一对",
    "rope.head_hover": "m − n = %{x}<br>平均分数 %{y:.3f}<br>共 %{customdata} 对",
    "rope.head_sentence": "第 {layer} 层第 {head} 个头（RoPE 基数 θ = {theta}，√d = {sqrt_d}，{n} 个 token）：平均分数在距离 {best} 处最高（{best_v}），在距离 {worst} 处最低"
                          "（{worst_v}）；每个 token 与自己（距离 0）的平均分数是 {zero}。",
    "rope.head_pairs": "距离 k 是当前输入中 {n} − k 对的平均，所以越远的距离依据的对越少（最远的只有一对）。"
                       "q 和 k 取自记录的激活，即旋转之后的值。",
    "rope.head_short": "输入只有一个 token，只有距离 0：请在侧边栏输入更长的文本。",
    "rope.head_no_rope": "当前模型的 q 和 k 没有旋转（位置编码：{position}），真实注意力头上没有 RoPE 可看："
                         "请在侧边栏选类 Llama 预设或 2025 年的预设，或者 SmolLM2。",
    "rope.random_head": "当前是随机权重：这个头的分数只是噪声，不偏向任何距离。在侧边栏选 SmolLM2 可以看到训练过的头"
                        "（基数 θ = 100,000）。",
    "rope.trained_head": "只训练了几秒：最多能看到对某些距离的微弱偏好。",
}
