"""The sidebar's readout of the server's memory (ui/memory.py)."""

EN = {
    "memory.section": "Server memory",
    "memory.show": "Show the numbers",
    "memory.rss": "This server process holds {rss} MiB of memory.",
    "memory.cache": "Shared cache: {used} of {budget} MiB in {n} entries; an entry leaves when the cache is full, "
                    "after {age} min unused, or 20 s after the last tab that used it closed.",
    "memory.kind": "{kind}: {n} ({size} MiB)",
    "memory.kind.models": "models",
    "memory.kind.traces": "forward records",
    "memory.kind.runs": "generation runs",
    "memory.kind.views": "page views",
    "memory.rest": "The rest ({rest} MiB): the app and its libraries, and the loaded checkpoints' weights (one copy "
                   "each, shared by every tab).",
}

ZH = {
    "memory.section": "服务器内存",
    "memory.show": "显示数字",
    "memory.rss": "本服务器进程占用 {rss} MiB 内存。",
    "memory.cache": "共享缓存：已用 {used} / {budget} MiB，共 {n} 项；缓存满时、{age} 分钟未用时，"
                    "或用到它的最后一个标签页关闭 20 秒后，条目就会移出。",
    "memory.kind": "{kind}：{n} 项（{size} MiB）",
    "memory.kind.models": "模型",
    "memory.kind.traces": "前向记录",
    "memory.kind.runs": "生成过程",
    "memory.kind.views": "页面视图",
    "memory.rest": "其余 {rest} MiB：应用本身及其程序库，以及已加载检查点的权重（每个只有一份，所有标签页共用）。",
}
