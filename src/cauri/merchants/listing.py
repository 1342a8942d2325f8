"""What every list route of the API reads before its filters: who asks, the request's session
and the page wanted; and the list envelope it answers with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.http import SessionDep
from cauri.kit.page_query import PageDep
from cauri.kit.pagination import Page, listing
from cauri.merchants.auth import CallerDep
from cauri.merchants.caller import Caller

Row = TypeVar("Row")


@dataclass(frozen=True)
class ListRequest:
    caller: Caller
    session: AsyncSession
    page: Page

    def answer(
        self, found: tuple[Sequence[Row], int], shown: Callable[[Row], Any]
    ) -> dict[str, Any]:
        """The page of `found` (its rows and how many match in all), each row as `shown`."""
        rows, total = found
        return listing([shown(row) for row in rows], self.page, total)


# A coroutine, though it awaits nothing: FastAPI runs a plain function dependency in its
# thread pool (cauri.http).
async def _list_request(caller: CallerDep, session: SessionDep, page: PageDep) -> ListRequest:
    return ListRequest(caller, session, page)


ListRequestDep = Annotated[ListRequest, Depends(_list_request)]
