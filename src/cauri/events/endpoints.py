"""The events of an environment, as they were notified (beyond the spec: GET /events)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from cauri.events import service
from cauri.events.schemas import EventObject
from cauri.http import SessionDep, UnitOfWorkRoute, ok
from cauri.kit.openapi import ListEnvelope, answers
from cauri.merchants.auth import CallerDep
from cauri.merchants.listing import ListRequestDep

router = APIRouter(route_class=UnitOfWorkRoute, tags=["events"])


@router.get("/events", responses=answers(ListEnvelope[EventObject]))
async def list_events(
    asked: ListRequestDep,
    type: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """The events of the environment, newest first (`type` filters by name)."""
    found = await service.list_events(asked.session, asked.caller, asked.page, type)
    return asked.answer(found, service.envelope)


@router.get("/events/{event_id}", responses=answers(EventObject))
async def get_event(event_id: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """One event, as it was notified."""
    return ok(service.envelope(await service.get(session, caller, event_id)))
