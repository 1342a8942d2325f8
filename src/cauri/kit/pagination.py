"""Page parameters and the list envelope (spec: List envelope; DESIGN: newest first, `page`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query


@dataclass(frozen=True)
class Page:
    page: int
    per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


def _page(
    page: Annotated[int, Query(ge=1)] = 1,
    per_page: Annotated[int, Query(ge=1, le=100)] = 25,
) -> Page:
    return Page(page, per_page)


PageDep = Annotated[Page, Depends(_page)]


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
