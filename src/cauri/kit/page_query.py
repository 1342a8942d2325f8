"""`page` and `per_page` as query parameters of the API's lists: a `Page`
(cauri.kit.pagination)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from cauri.kit.pagination import MAX_PAGE, Page


def _page(
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    per_page: Annotated[int, Query(ge=1, le=100)] = 25,
) -> Page:
    return Page(page, per_page)


PageDep = Annotated[Page, Depends(_page)]
