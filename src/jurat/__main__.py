"""``python -m jurat``: the same as the ``jurat`` command."""

from jurat.cli import main

main()
