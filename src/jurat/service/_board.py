"""The public board served by ``jurat serve --board`` at ``/board/``.

The page is ``jurat board``'s (report/_board.py), built from the ledger the service
writes: it is rebuilt when a request finds a newer signed checkpoint than the one it was
built at, into a fresh directory that then replaces the old one, so a reader never sees a
half-written board and a new verdict is listed once its checkpoint is signed (the service
signs one every few seconds while jobs finish). The board is public ("No account. No
keys.", seed 001): it lists every receipt in the ledger, so serving it is the operator's
choice (off by default), and it is the only route that needs no token.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from pathlib import Path

from jurat.ledger import Ledger, LogSigner
from jurat.receipts import PrivateKey, public_key_pem

__all__ = ["BoardCache"]

#: What a file under ``/board/files/`` may be called (what report/_board_files.py writes).
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,254}")


class BoardCache:
    """The current board's directory, rebuilt when the ledger has a newer checkpoint."""

    def __init__(self, ledger: Ledger, key: PrivateKey, log_signer: LogSigner, *,
                 title: str = "jurat board") -> None:
        self._ledger = ledger
        self._title = title
        self._root = Path(tempfile.mkdtemp(prefix="jurat-board-"))
        # The keys the page's commands name, as files beside the receipts.
        self._public = self._root / "jurat.pub"
        self._public.write_bytes(public_key_pem(key.public_key()))
        self._log_public = self._root / "jurat-log.pub"
        self._log_public.write_text(log_signer.verifier_key() + "\n", encoding="ascii")
        self._lock = threading.Lock()
        self._built_at: int | None = None
        self._current: Path | None = None
        self._generation = 0

    def _checkpoint_size(self) -> int:
        checkpoint = self._ledger.latest_checkpoint()
        return -1 if checkpoint is None else checkpoint.tree_size

    def current(self) -> Path:
        """The directory of the board at the newest checkpoint (built now if needed)."""
        from jurat.report import write_board

        with self._lock:
            size = self._checkpoint_size()
            if self._current is None or size != self._built_at:
                self._generation += 1
                fresh = self._root / f"board-{self._generation}"
                write_board(self._ledger, fresh, public_key=self._public,
                            log_public_key=self._log_public, title=self._title)
                old, self._current, self._built_at = self._current, fresh, size
                if old is not None:
                    shutil.rmtree(old, ignore_errors=True)
            return self._current

    def file(self, path: str) -> Path | None:
        """The file ``/board/<path>`` names, or None: only the page and its listed files."""
        root = self.current()
        if path in ("", "index.html"):
            return root / "index.html"
        folder, _, name = path.partition("/")
        if folder != "files" or not _FILE_NAME.fullmatch(name) or ".." in name:
            return None
        found = root / "files" / name
        return found if found.is_file() else None

    def close(self) -> None:
        """Remove the built boards."""
        shutil.rmtree(self._root, ignore_errors=True)
