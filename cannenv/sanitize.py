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

# C0 controls, DEL, C1 controls, the Unicode bidi embedding/override/isolate characters, and lone
# surrogates (a file name that is not UTF-8, as Python decodes it: a strict terminal refuses them)
_TERMINAL_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_TERMINAL_TEXT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
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


# -- file names ------------------------------------------------------------------------------------

PLAIN_FILE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._+%~-]{0,254}$"
"""One rule for a file name taken from data (a matrix ``file``, a wheel, an inventory host's facts
file): letters, digits and ``._+%~-``, not starting with a dot or a dash, at most 255 characters.
No ``/``, no ``..`` component, no control characters, no glob or shell metacharacters: such a name
stays inside the folder it is joined to, on the controller and on the host alike."""
_PLAIN_FILE_NAME = re.compile(PLAIN_FILE_NAME)


def is_plain_file_name(name: object) -> bool:
    """True when ``name`` is a file name by :data:`PLAIN_FILE_NAME` (never a path)."""
    return isinstance(name, str) and _PLAIN_FILE_NAME.fullmatch(name) is not None and name not in (".", "..")


# -- shell scripts ---------------------------------------------------------------------------------

_SHELL_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shell_word(value: object) -> str:
    """One shell word meaning exactly ``value``: ``shlex.quote`` when it holds no control character;
    otherwise bash's ``$'…'`` quoting with every control character written as an escape (``\\n``,
    ``\\x1b``, ``\\xe2\\x80\\xae`` for U+202E: its UTF-8 bytes, whatever the locale), so a
    person reading the script sees it and the shell reads the same bytes.
    Scripts that use it run under bash (``plan --shell`` and the provision role do)."""
    import shlex

    text = str(value)
    if not _SHELL_CONTROL.search(text):
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif _SHELL_CONTROL.match(ch):  # its UTF-8 bytes: bash's \\u depends on the locale
            named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch)
            out.append(named or "".join(f"\\x{b:02x}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def shell_comment(value: object) -> str:
    """Text for a ``#`` comment of a shell script: one line (a newline would end the comment and
    start a command), every control character made visible as in :func:`line`."""
    return line(value)


# -- Ansible ----------------------------------------------------------------------------------------

TEMPLATE_MARKERS = ("{{", "{%", "{#")
"""What starts a Jinja expression, statement or comment: never in a string that is data."""


def ansible_vars_yaml(variables: object) -> str:
    """A YAML document of Ansible variables (``-e @FILE``) in which every string value is tagged
    ``!unsafe``: Ansible never renders it as a template, whatever it holds (``{{ lookup('pipe', …)
    }}`` from a host's version file stays text). Keys stay plain (they are cannenv's own names and
    the inventory's host names)."""
    import yaml

    class _Unsafe(str):
        pass

    class _Dumper(yaml.SafeDumper):
        pass

    def _unsafe(dumper: yaml.SafeDumper, data: _Unsafe) -> yaml.ScalarNode:
        return dumper.represent_scalar("!unsafe", str(data), style='"')

    _Dumper.add_representer(_Unsafe, _unsafe)

    def wrap(v: object) -> object:
        if isinstance(v, str):
            return _Unsafe(v)
        if isinstance(v, dict):
            return {str(k): wrap(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [wrap(x) for x in v]
        return v

    return str(yaml.dump(wrap(variables), Dumper=_Dumper, allow_unicode=False, sort_keys=True))
