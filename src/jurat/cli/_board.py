"""``jurat board LEDGER --out DIR``: write the public board (``jurat.report.write_board``).

Exit 0 when the board was written; 3 when the ledger cannot be opened (a missing ledger is
not created) or the output directory cannot be written.
"""

from __future__ import annotations

from pathlib import Path

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.errors import ConfigError, JuratError

__all__ = ["board_command"]


def board_command(ledger_url: str, out: Path, *, key: Path | None, log_key: Path | None,
                  title: str) -> ExitCode:
    """Write the board; print where, and how many verdicts it lists."""
    from jurat.ledger import log_public_beside, open_ledger
    from jurat.receipts import default_public_key_path
    from jurat.report import write_board

    public = key if key is not None else default_public_key_path()
    log_public = log_key if log_key is not None else log_public_beside(public)
    for given, option in ((key, "--key"), (log_key, "--log-key")):
        if given is not None and not given.is_file():
            return print_error(ConfigError(f"{option} {given}: no such file"),
                               code=ExitCode.INPUT)
    try:
        ledger = open_ledger(ledger_url, create=False)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    with ledger:
        try:
            summary = write_board(ledger, out, public_key=public, log_public_key=log_public,
                                  title=title)
        except OSError as exc:
            return print_error(ConfigError(f"cannot write the board to {out}: "
                                           f"{exc.strerror or exc}"), code=ExitCode.INPUT)
    where = (f"checkpoint at tree size {summary.checkpoint.tree_size}"
             if summary.checkpoint is not None else "no checkpoint yet")
    print(f"board: {summary.page} ({summary.receipts} signed verdicts, {summary.proven} with "
          f"an inclusion proof; {where})")
    return ExitCode.OK
