"""Log-scale charts label every tick with its full value (Plotly's default labels the ticks between powers of ten
by their leading digit, so 0.02 read "2"), and the KV-cache bars show as many digits as the table (0.25 MiB, not 0.2)."""

import pandas as pd

from analysis.generation import memory_table
from engine import ModelConfig
from ui.figures.generate import memory_bars
from ui.figures.massive import massive_chart
from ui.format import significant


def test_kv_memory_chart_labels_full_values():
    config = ModelConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=128)
    df = memory_table(config, "this model", seq_len=256, bytes_per_value=4)
    fig = memory_bars(df, "t", "x", "y")
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.tickformat  # full tick labels
    mqa = df[(df["model"] == "this model") & (df["attention"] == "MQA")]["mib"].iloc[0]
    # 2 layers x 1 KV head x 16 dims x 256 tokens x 4 bytes x (K and V) = 65,536 bytes = 0.0625 MiB
    assert mqa == 2 * 2 * 1 * 16 * 256 * 4 / 2**20
    (bar,) = [b for b in fig.data if b.name == "MQA"]
    label = bar.text[list(bar.x).index("this model")]
    assert float(label) == 0.0625 or abs(float(label) - 0.0625) / 0.0625 < 0.01, label


def test_significant_keeps_three_digits():
    assert [significant(v) for v in (0.25, 0.0625, 1.5, 12.34, 4096.0)] == ["0.25", "0.0625", "1.5", "12.3", "4,096"]


def test_massive_activations_axis_labels_full_values():
    df = pd.DataFrame({"depth": [0, 1], "max_abs": [0.02, 3.0], "median_abs": [0.01, 0.5], "position": [0, 1],
                       "dim": [3, 4], "ratio": [2.0, 6.0]})
    fig = massive_chart(df, ["embed", "block 1"], "t", "x", "y", "max", "median", "{position} {dim} {ratio}")
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.tickformat
