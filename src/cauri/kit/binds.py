"""The bind parameters of a part of a statement that another domain composes into its own
(a ledger transaction, an event, a job written in the same round trip as the row they follow
from), one per field of a frozen dataclass of the part's values.

Each parameter is unique (SQLAlchemy names it when the statement is compiled, so that two
parts of one kind, or a part and the caller's own columns, never share a name) and typed:
the asyncpg dialect then casts it in the SQL it sends, which PostgreSQL needs in an
INSERT ... SELECT, where it infers no parameter's type. The statement is built once with
these parameters; each execution passes `values(...)`, keyed by the parameters themselves,
so that the statement's compiled form is reused and no domain knows another's names."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import (
    CTE,
    BindParameter,
    ColumnElement,
    FromClause,
    Table,
    bindparam,
    insert,
    select,
)
from sqlalchemy.types import TypeEngine

Values = TypeVar("Values")


class Binds(Generic[Values]):
    """A parameter per field of `shape`, of the type given for it."""

    def __init__(self, shape: type[Values], **types: TypeEngine[Any]) -> None:
        fields = [field.name for field in dataclasses.fields(shape)]  # type: ignore[arg-type]
        if set(fields) != set(types):
            raise TypeError(f"{shape.__name__}: a type for each field, {fields}, not {list(types)}")
        self._binds = {name: bindparam(name, type_=types[name], unique=True) for name in fields}

    def __getitem__(self, field: str) -> BindParameter[Any]:
        return self._binds[field]

    def values(self, values: Values) -> dict[str, Any]:
        """The execution's parameters: `values`' fields, keyed by their parameters."""
        return {bind.key: getattr(values, name) for name, bind in self._binds.items()}


@dataclass(frozen=True)
class Part(Generic[Values]):
    """A part of another domain's statement: the CTE it adds (a job queued, an outcome
    counted on a circuit) and the parameters each execution fills for it."""

    cte: CTE
    binds: Binds[Values]

    def values(self, values: Values) -> dict[str, Any]:
        return self.binds.values(values)


def inserted(table: Table, row: Mapping[str, ColumnElement[Any]], source: FromClause | None) -> CTE:
    """`INSERT INTO table (row's columns) SELECT row's values [FROM source] RETURNING id`, as a
    CTE of another domain's statement: one row per row of `source` (None: one row)."""
    select_row = select(*row.values())
    if source is not None:
        select_row = select_row.select_from(source)
    return insert(table).from_select(list(row), select_row).returning(table.c.id).cte()
