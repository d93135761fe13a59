"""Small Streamlit helpers shared by the pages (charts with exports, explanations)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui.i18n import t


def chart(fig: go.Figure, data: pd.DataFrame | None, key: str) -> None:
    """Show a Plotly figure with its data as CSV and the figure as standalone HTML (PNG: Plotly toolbar).

    ``key`` is a namespaced, stable widget key, e.g. ``"norms.residual"``.
    """
    if st.session_state.get("ui.presenter"):  # presenter mode: fonts readable from the back of the room
        fig.update_layout(font_size=20, title_font_size=24)
    st.plotly_chart(fig, key=f"{key}.chart", config={"displaylogo": False})
    if data is None:
        return
    row = st.container(horizontal=True, gap="small")  # buttons keep their natural width, even in narrow columns
    row.download_button(t("common.download_csv"), lambda: data.to_csv(index=False).encode("utf-8"),
                       file_name=f"{key}.csv", mime="text/csv", key=f"{key}.csv", on_click="ignore")
    row.download_button(t("common.download_html"), lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{key}.html", mime="text/html", key=f"{key}.html", on_click="ignore")


def explain(text: str) -> None:
    """The page's two-to-four-sentence "what to look for" box."""
    st.info(f"**{t('common.what_to_look_for')}** {text}")
