"""Pages and the list envelope (spec: List envelope; DESIGN: newest first, `page`). Without
FastAPI (the CLI's commands import it): a page as the API's query parameters is in
`kit/page_query.py`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession

Row = TypeVar("Row")

# Far beyond any real list, and small enough that the row offset fits PostgreSQL's BIGINT.
MAX_PAGE = 1_000_000


@dataclass(frozen=True)
class Page:
    page: int
    per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


async def paginate(
    session: AsyncSession,
    entity: type[Row],
    conditions: Sequence[ColumnElement[bool]],
    order_by: Sequence[ColumnElement[Any]],
    page: Page,
) -> tuple[Sequence[Row], int]:
    """One page of `entity` rows matching `conditions`, and how many match in all."""
    total = await session.scalar(select(func.count()).select_from(entity).where(*conditions))
    rows = await session.scalars(
        select(entity)
        .where(*conditions)
        .order_by(*order_by)
        .offset(page.offset)
        .limit(page.per_page)
    )
    return rows.all(), int(total or 0)


def listing(items: list[Any], page: Page, total: int) -> dict[str, Any]:
    return {
        "success": True,
        "data": items,
        "meta": {
            "current_page": page.page,
            "per_page": page.per_page,
            "total": total,
            "last_page": max(1, math.ceil(total / page.per_page)),
        },
    }
