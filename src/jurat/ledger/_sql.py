"""``column IN (values…)`` for reads of many keys, on either backend.

SQLite takes an ``IN`` list of bound parameters, a few hundred at a time. PostgreSQL takes
the keys as one array parameter (``column = ANY(:keys)``): its statement text is then the
same whatever the number of keys, so the server plans it as cheaply for 10,000 keys as
for one (the ledger does not use server-side prepared statements, ``_backend.py``), where
an ``IN`` list of 500 parameters was parsed and planned anew for every chunk of an
inclusion-proof read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Connection, any_, bindparam

__all__ = ["chunks", "one_of"]

_T = TypeVar("_T")
_CHUNK = {"postgresql": 10_000}
#: Far below SQLite's parameter limit (32,766).
_DEFAULT_CHUNK = 500


def chunks(conn: Connection, values: Sequence[_T]) -> Iterator[Sequence[_T]]:
    """``values`` in slices that one ``one_of`` read takes on ``conn``'s backend."""
    size = _CHUNK.get(conn.dialect.name, _DEFAULT_CHUNK)
    for start in range(0, len(values), size):
        yield values[start : start + size]


def one_of(conn: Connection, column: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    """``column`` is one of ``values`` (a slice from ``chunks``)."""
    if conn.dialect.name == "postgresql":
        # Here, not at the top: the dialect's modules are a few hundredths of a second of
        # every start-up, SQLite ledgers included.
        from sqlalchemy.dialects.postgresql import ARRAY

        keys = bindparam(None, list(values), type_=ARRAY(column.type))
        result: ColumnElement[bool] = column == any_(keys)
        return result
    in_list: ColumnElement[bool] = column.in_(values)
    return in_list
