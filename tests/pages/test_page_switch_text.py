"""The sidebar text survives page switches after it was once cleared (Streamlit keeps each page's own widget
value: the first run of a page opened again must take the session's text, not that page's stale one)."""

import pytest

from tests.page_helpers import open_page, texts


@pytest.mark.parametrize("other", ["attention", "generate"])
def test_text_typed_on_another_page_after_clearing_survives_the_way_back(other):
    at = open_page("overview")
    at.text_area(key="input.text").input("").run()
    assert "The text is empty" in texts(at)  # the cleared text is refused on Overview
    at.switch_page(f"app_pages/{other}.py").run()
    at.text_area(key="input.text").input("moon light").run()
    assert "The text is empty" not in texts(at)
    at.switch_page("app_pages/overview.py").run()
    assert at.text_area(key="input.text").value == "moon light"
    assert "The text is empty" not in texts(at)
