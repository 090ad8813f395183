"""``jurat …``: one package for every command, its exit statuses and its error printer.

The libraries (``jurat.runner``, ``jurat.receipts``, ``jurat.checks``, ``jurat.ledger``)
keep the logic and raise ``JuratError``; the modules here read the command line, open
what a command needs, print, and turn the outcome into an ``ExitCode``. One function
prints errors (``print_error``); one handler catches what escapes a command (``finish``).
"""

from jurat.cli._app import app, main
from jurat.cli._errors import finish, print_error
from jurat.cli._exit import ExitCode

__all__ = ["ExitCode", "app", "finish", "main", "print_error"]
