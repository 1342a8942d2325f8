"""A new row described once, as its values by column name. The same description is the ORM
object of the row (`build`) and the parameters of an INSERT written as a CTE of a larger
statement (`inserted`), whose columns are the description's own: a column added to a
domain's description reaches both of its write paths, with nothing restated by hand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, TypeVar, cast

from sqlalchemy import Table, bindparam, inspect
from sqlalchemy.dialects.postgresql import Insert, insert

from cauri.models.base import Base

Model = TypeVar("Model", bound=Base)


@cache
def _attributes(model: type[Base]) -> dict[str, str]:
    """Each column's attribute on `model`, where the two names differ (`metadata` is taken
    on a mapped class)."""
    mapper = inspect(model)
    return {
        column.name: prop.key
        for prop in mapper.column_attrs
        for column in prop.columns
        if column.name != prop.key
    }


def build(model: type[Model], row: Mapping[str, Any]) -> Model:
    """The ORM object of the row `row` describes (not added to any session)."""
    names = _attributes(model)
    return model(**{names.get(column, column): value for column, value in row.items()})


def attributes(model: type[Base], row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` keyed by `model`'s attribute names (for an ORM-enabled INSERT)."""
    names = _attributes(model)
    return {names.get(column, column): value for column, value in row.items()}


def inserted(table: Table, columns: Iterable[str]) -> Insert:
    """The INSERT of one row of `table` with the given columns, each a parameter named after
    its column and typed as it is (a JSON or array value is serialized as SQLAlchemy
    serializes it on the ORM path); the caller adds its conflict clause and RETURNING."""
    listed = tuple(columns)
    unknown = set(listed) - set(table.c.keys())
    assert not unknown, unknown
    return insert(table).values(
        {column: bindparam(column, type_=cast(Any, table.c[column].type)) for column in listed}
    )
