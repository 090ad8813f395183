"""The optional packages `jurat serve` needs, imported only when it runs."""

from __future__ import annotations

from jurat.errors import DependencyError

__all__ = ["require_serve"]

_INSTALL = "pip install 'jurat[serve]' (FastAPI and uvicorn)"


def require_serve() -> None:
    """Raise DependencyError naming what to install when FastAPI or uvicorn is missing."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise DependencyError(f"`jurat serve` needs {exc.name or 'fastapi'}: {_INSTALL}"
                              ) from exc
