"""Making text from hostile inputs safe for each output: terminal, XML, HTML. JSON stays exact.

A version file, a facts file or a matrix may hold control characters: ESC/OSC sequences that set
a terminal's window title or redraw lines, CR that overwrites a line ("all checks passed"),
bidirectional overrides that reorder what is shown, NUL and other C0 characters that make XML
not well-formed. Every renderer passes the values it prints through one of these functions; the
JSON renderers do not (JSON escapes them itself and must carry the exact bytes).

The replacement is visible and unambiguous: ``\\x1b``, ``\\r``, ``\\u202e``.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, and the Unicode bidi embedding/override/isolate characters
_TERMINAL_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_TERMINAL_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# characters XML 1.0 does not allow at all (even escaped), plus the C1 range and bidi controls
_XML_BAD = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)


def _visible(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch == "\r":
        return "\\r"
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def line(value: object) -> str:
    """One terminal line: every control character (newline and CR included) made visible."""
    text = str(value)
    return _TERMINAL_LINE.sub(_visible, text) if _TERMINAL_LINE.search(text) else text


def text(value: object) -> str:
    """Terminal text of several lines: newlines and tabs kept, every other control made visible."""
    s = str(value)
    s = s.replace("\r\n", "\n")
    return _TERMINAL_TEXT.sub(_visible, s) if _TERMINAL_TEXT.search(s) else s


def xml(value: str) -> str:
    """A serialised XML document with the characters XML 1.0 forbids made visible (they can only
    come from data: markup never holds them), so the document is well-formed."""
    return _XML_BAD.sub(_visible, value) if _XML_BAD.search(value) else value


def html(value: object) -> object:
    """A value for an HTML template (Jinja ``finalize``): strings lose their control characters;
    autoescaping then handles markup."""
    if isinstance(value, str):
        return text(value)
    return value
