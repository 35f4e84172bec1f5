"""`cannenv certify` commands (placeholder until implemented)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
