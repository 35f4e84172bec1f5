"""Click commands, one module per family. Each module exports ``COMMANDS``.

Commands return an ``int`` exit code (or None for 0); they raise :mod:`cannenv.errors` errors for
everything else. Keep heavy imports inside the command functions.
"""
