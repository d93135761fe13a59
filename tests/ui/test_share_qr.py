"""The share panel's QR code (ui/share.py): the image drawn is the QR code of exactly the link printed under it.

No QR decoder is installed, so the image is checked module by module: the SVG path that segno drew is turned
back into a grid of dark modules and compared with ``segno.make(link).matrix`` of the printed link (segno's
encoder is the reference; the test pins that the picture and the text shown are the same link, drawn whole).
"""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

import segno

from ui.share import QR_MAX_BYTES, qr_html, is_local, qr_code, qr_data_uri

BORDER = 4  # the quiet zone ui.share draws


def svg_modules(data_uri: str) -> tuple[int, set[tuple[int, int]]]:
    """``(side, dark cells)`` of a segno SVG data URI: its viewBox side and the (row, col) of every dark module.

    segno draws a white square, then one black path of relative moves (``m dx dy``, the first absolute) and horizontal runs (``h n``) on
    the line through each row's middle (y = row + 0.5)."""
    assert data_uri.startswith("data:image/svg+xml")
    svg = unquote(data_uri.split(",", 1)[1])
    side = int(re.search(r"viewBox=['\"]0 0 (\d+) \d+['\"]", svg).group(1))
    assert re.search(r"<path fill='#fff' d='M0 0h(\d+)v\1h-\1z'/>", svg)  # a white square under the code
    d = re.search(r"<path class='qrline' stroke='#000' d='([^']+)'", svg).group(1)
    x = y = 0.0
    dark: set[tuple[int, int]] = set()
    for cmd, a, b in re.findall(r"([MmHh])(-?[\d.]+)(?:[ ,](-?[\d.]+))?", d):
        if cmd == "M":
            x, y = float(a), float(b)
        elif cmd == "m":
            x, y = x + float(a), y + float(b)
        else:
            n = float(a) if cmd == "h" else float(a) - x
            dark.update((int(y - 0.5), int(x + i)) for i in range(int(n)))
            x += n
    return side, dark


def reference_modules(link: str) -> tuple[int, set[tuple[int, int]]]:
    """The same for ``segno.make(link)``'s matrix, with the quiet zone added."""
    matrix = segno.make(link, micro=False).matrix
    dark = {(r + BORDER, c + BORDER) for r, row in enumerate(matrix) for c, v in enumerate(row) if v}
    return len(matrix) + 2 * BORDER, dark


def shown(block: str) -> tuple[str, str]:
    """``(img src, link text)`` of the panel's HTML block."""
    src = re.search(r'<img[^>]*\ssrc="([^"]+)"', block).group(1)
    text = re.search(r'class="share-qr-link"[^>]*>(.*?)</div>', block, re.S).group(1)
    assert "&<wbr>" not in text  # a wrapping hint inside an entity would show "&amp;"
    return src, html.unescape(text.replace("<wbr>", ""))  # <wbr>: a place the browser may wrap, no character


LINKS = [
    "http://192.168.1.20:8501/attention?ui.lang=zh&cfg.num_hidden_layers=4",
    "http://lab.example.edu:8080/generate?gen.steps=7&input.text=%E5%BA%8A%E5%89%8D%E6%98%8E%E6%9C%88%E5%85%89",
    "http://10.0.0.5:8501/overview",
]


def test_the_image_is_the_qr_code_of_the_link_printed_under_it():
    for link in LINKS:
        block = qr_html(link, qr_code(link), "11rem", "0.7rem")
        src, text = shown(block)
        assert text == link
        assert svg_modules(src) == reference_modules(text)


def test_a_different_link_draws_a_different_code():
    """The comparison above can fail: one changed character gives another grid."""
    a, b = LINKS[0], LINKS[0].replace("=4", "=5")
    assert svg_modules(qr_data_uri(qr_code(a))) != reference_modules(b)


def test_a_link_in_html_is_escaped():
    """Markup in a link is text, and its ``&`` separators survive the wrapping hints (``&<wbr>amp;`` did not)."""
    link = 'http://10.0.0.5:8501/overview?input.text=%3Cb%3E&x="<b>&y=1'
    block = qr_html(link, qr_code(link), "11rem", "0.7rem")
    assert "<b>" not in block.split('class="share-qr-link"')[1]
    assert shown(block)[1] == link


def test_too_long_for_a_qr_code_is_said_not_drawn():
    """QR_MAX_BYTES is the capacity of the largest code (version 40-L, byte mode): one byte more has no code."""
    base = "http://10.0.0.5:8501/overview?input.text="
    fits = base + "a" * (QR_MAX_BYTES - len(base))
    assert qr_code(fits).version == 40
    assert qr_code(fits + "a") is None


def test_links_only_the_server_can_open_are_named():
    assert is_local("http://localhost:8501/overview")
    assert is_local("http://127.0.0.1:8731/attention?ui.lang=zh")
    assert is_local("http://[::1]:8501/")
    assert not is_local("http://192.168.1.20:8501/overview")
    assert not is_local("http://lab.example.edu/overview")
