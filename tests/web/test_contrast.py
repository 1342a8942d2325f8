"""The customers' pages meet WCAG 2.1 AA contrast (4.5:1 for text): every text colour of the
pages' stylesheet (web/templates/base.html) against the background it is drawn on, read
from the stylesheet itself, so that a colour changed there is checked here."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import cauri.web

STYLESHEET = (Path(cauri.web.__file__).parent / "templates" / "base.html").read_text()
AA = 4.5


def _rule(selector: str) -> str:
    match = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", STYLESHEET)
    assert match is not None, selector
    return match.group(1)


def _colour(selector: str, prop: str) -> str:
    """A property's colour in a rule, a custom property (var(--ink)) resolved."""
    match = re.search(rf"(?<![-\w]){prop}\s*:\s*([^;]+);", _rule(selector))
    assert match is not None, (selector, prop)
    value = match.group(1).strip()
    if value.startswith("var("):
        name = value[4:-1]
        found = re.search(rf"{name}\s*:\s*(#[0-9a-fA-F]{{6}})", _rule(":root"))
        assert found is not None, name
        return found.group(1)
    return value


def _luminance(hex_colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(foreground: str, background: str) -> float:
    lighter, darker = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


WHITE = "#ffffff"
Colour = Callable[[], str]
# (what, its text colour, the background it is drawn on)
PAIRS: list[tuple[str, Colour, Colour]] = [
    ("text", lambda: _colour(":root", "--ink"), lambda: WHITE),
    ("hints, notes, the brand", lambda: _colour(":root", "--muted"), lambda: WHITE),
    ("the pay button", lambda: WHITE, lambda: _colour(".ok", "background")),
    ("a field's error", lambda: _colour(".field-error", "color"), lambda: WHITE),
    (
        "the test-mode note",
        lambda: _colour(".test", "color"),
        lambda: _colour(".test", "background"),
    ),
    (
        "success",
        lambda: _colour(":root", "--ok"),
        lambda: _colour(".status-succeeded", "background"),
    ),
    (
        "failure",
        lambda: _colour(":root", "--ko"),
        lambda: _colour(".status-failed, .status-error", "background"),
    ),
    (
        "waiting",
        lambda: _colour(".status-refunded, .status-pending", "color"),
        lambda: _colour(".status-refunded, .status-pending", "background"),
    ),
    ("links", lambda: _colour("a", "color"), lambda: WHITE),
]


@pytest.mark.parametrize(("what", "foreground", "background"), PAIRS, ids=[p[0] for p in PAIRS])
def test_text_meets_aa_contrast(what: str, foreground: Colour, background: Colour) -> None:
    fg, bg = foreground(), background()
    assert contrast(fg, bg) >= AA, f"{what}: {fg} on {bg} is {contrast(fg, bg):.2f}:1"
