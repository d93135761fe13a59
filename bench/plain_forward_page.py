"""The reference page of ``bench/bench_pages.py --every``: the shared sidebar (the same model and text as every page,
set by the same link), one plain forward of that text (kept for a rerun of the same view) and one chart of its last
position's top-10 next tokens.

Not part of the app: ``streamlit run bench/plain_forward_page.py`` serves it alone, so a page of the app can be
measured against "one plain forward of the same text plus drawing" on the same machine, in the same run.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402
import torch  # noqa: E402

from ui.sidebar import explorer  # noqa: E402



@st.cache_resource(max_entries=4)
def last_probs(_model, model_key: str, ids: tuple[int, ...]) -> torch.Tensor:
    """The one plain forward (no activation record, no KV cache), kept so that a rerun of the same view costs
    what a page's cached rerun costs: the sidebar and the drawing."""
    with torch.no_grad():
        return _model(torch.tensor([ids])).logits[0, -1].softmax(-1)  # [V]: after the text's last token


ctx = explorer()
top = last_probs(ctx.model, ctx.model_key, tuple(ctx.input_ids[0].tolist())).topk(10)
labels = [repr(s) for s in ctx.token_strings(top.indices.tolist())]
fig = go.Figure(go.Bar(x=labels, y=top.values.tolist()))
fig.update_layout(xaxis_title="next token", yaxis_title="probability", height=360)
st.plotly_chart(fig)
