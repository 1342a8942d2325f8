"""The events of an environment, as they were notified (beyond the spec: GET /events)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from cauri.events import service
from cauri.events.feed import Cursor, Feed
from cauri.events.schemas import EventFeedPage, EventObject
from cauri.http import SessionDep, UnitOfWorkRoute, ok
from cauri.kit.errors import InvalidRequest
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


@router.get("/events/feed", responses=answers(EventFeedPage))
async def follow_events(
    request: Request,
    caller: CallerDep,
    session: SessionDep,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    wait: Annotated[float, Query(ge=0, le=60)] = 0,
) -> dict[str, Any]:
    """The test environment's events in the order they committed, after `cursor` (none: from
    now on), answered as soon as there is one or after `wait` seconds with none (long
    polling; 0, the default, answers at once); give the answer's `cursor` back to read on.
    What `cauri-client listen` follows to forward them to a developer's machine. Test keys
    only."""
    if caller.livemode:
        raise InvalidRequest(
            "Le flux ne suit que les événements de test : prenez une clé sk_test_."
        )
    feed: Feed = request.app.state.event_feed
    start = None if cursor is None else Cursor.parse(cursor)
    followed = await feed.follow(session, caller.merchant_id, start, wait, request.is_disconnected)
    data = [service.envelope(event) for event in followed.events]
    return {"success": True, "data": data, "cursor": followed.cursor.token()}


@router.get("/events/{event_id}", responses=answers(EventObject))
async def get_event(event_id: str, caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    """One event, as it was notified."""
    return ok(service.envelope(await service.get(session, caller, event_id)))
