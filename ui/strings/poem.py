"""Strings for the Tang-poem model shipped in the repository (``tang-poems-small``)."""

EN = {
    "poem.name": "Tang-poem small model",
    "poem.title": "Tang-poem small model (trained here, {params} parameters)",
    "poem.learned": "**What it learned**, measured on {poems} held-out poems it never trained on ({tokens} characters, punctuation and line breaks included): "
                    "mean loss {loss} nats per character, against ln V = {lnv} for a uniform guess over its {vocab} "
                    "tokens; after the 5th character of a five-character line p(“，”) = {comma} (untrained: "
                    "{comma0}), after the 10th p(“。”) = {period} ({lines} lines). Trained on the other Tang poems "
                    "only, one token per character; the sidebar's default poem is one of them.",
}

ZH = {
    "poem.name": "唐诗小模型",
    "poem.title": "唐诗小模型（本项目训练，{params} 个参数）",
    "poem.learned": "**学到了什么**（在训练时从未见过的 {poems} 首留出诗上测得，共 {tokens} 个字符，含标点和换行）："
                    "平均每个字符的损失为 {loss} 奈特，而在 {vocab} 个 token 上均匀地猜是 ln V = {lnv}；"
                    "五言句第 5 字之后 p(“，”) = {comma}（未训练时 {comma0}），第 10 字之后 p(“。”) = {period}"
                    "（共 {lines} 句）。只用其余的唐诗训练，每个字符是一个 token；侧栏默认的诗就在其中。",
}
