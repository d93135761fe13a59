"""analysis: model outputs (torch) -> tidy pandas DataFrames for the pages (the engine itself stays torch-only).

Modules: generation; and for the views that need a real model, heads (head roles), lens (logit lens),
massive (massive activations and attention sinks), tokenizers (tokens as bytes, tokenizer comparison).
Nothing here imports streamlit or plotly, and nothing here changes a model (models are shared between sessions).
Column vocabulary as in ``engine.analysis``: ``layer`` and ``head`` are 0-based, ``position`` is 0-based.
"""
