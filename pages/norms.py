"""Placeholder (being built)."""

from ui.sidebar import explorer

ctx = explorer()
