"""Presentation layer: Plotly figure builders (DataFrame -> go.Figure), i18n, and the shared sidebar."""
