"""Plotly figure builders: pure functions ``DataFrame -> go.Figure`` (one module per page)."""
