"""The events of an environment, as they were notified (beyond the spec: GET /events)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from cauri.events import service
from cauri.http import SessionDep, UnitOfWorkRoute, ok
from cauri.kit.pagination import PageDep, listing
from cauri.merchants.auth import CallerDep

router = APIRouter(route_class=UnitOfWorkRoute, tags=["events"])


@router.get("/events")
async def list_events(
    caller: CallerDep,
    session: SessionDep,
    page: PageDep,
    type: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    rows, total = await service.list_events(session, caller, page, type)
    return listing([service.envelope(row) for row in rows], page, total)


@router.get("/events/{event_id}")
async def get_event(event_id: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    return ok(service.envelope(await service.get(session, caller, event_id)))
