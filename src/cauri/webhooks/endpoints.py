"""Webhook configuration, test notification and delivery log (spec: Endpoints, Webhooks)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit.errors import Conflict
from cauri.kit.openapi import ListEnvelope, answers
from cauri.merchants import webhook_secrets
from cauri.merchants.auth import CallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.webhooks import service
from cauri.webhooks.schemas import (
    DeliveryEntry,
    EndpointObject,
    EndpointUpdate,
    TestSent,
    delivery_entry,
    endpoint_object,
)

router = APIRouter(route_class=UnitOfWorkRoute, tags=["webhooks"])

DeliveryStatus = Literal["pending", "success", "failed"]


@router.put("/webhooks/endpoint", responses=answers(EndpointObject))
async def set_endpoint(
    body: EndpointUpdate, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """Sets (or, with `url: null`, disables) the environment's endpoint; returns its
    signing secret, which `rotate_secret: true` renews."""
    configured = await service.configure(session, runtime, caller, body)
    return ok(endpoint_object(configured.endpoint.url, configured.secret))


@router.get("/webhooks/endpoint", responses=answers(EndpointObject))
async def get_endpoint(
    caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """The environment's endpoint and its signing secret."""
    found = await service.endpoint(session, caller)
    return ok(endpoint_object(found.url, webhook_secrets.revealed(runtime.settings, found)))


@router.post("/webhooks/test", responses=answers(TestSent))
async def send_test(caller: CallerDep, session: SessionDep, runtime: RuntimeDep) -> dict[str, Any]:
    """Sends a signed `webhook.test` event to the endpoint."""
    result = await service.send_test(session, runtime, caller)
    data: dict[str, Any] = {
        "sent": result.sent,
        "delivery_id": str(result.delivery_id),
        "url": result.url,
    }
    if not result.sent:
        data["reason"] = service.NO_ENDPOINT_REASON
    return ok(data)


@router.get("/webhooks/deliveries", responses=answers(ListEnvelope[DeliveryEntry]))
async def list_deliveries(
    asked: ListRequestDep,
    status: Annotated[DeliveryStatus | None, Query()] = None,
) -> dict[str, Any]:
    """The delivery log of the key's environment, newest first."""
    found = await service.list_deliveries(asked.session, asked.caller, asked.page, status)
    return asked.answer(found, delivery_entry)


@router.post("/webhooks/deliveries/{delivery_id}/retry", responses=answers(DeliveryEntry, Conflict))
async def retry_delivery(
    delivery_id: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    """A failed delivery gets a new series of attempts; a pending one its next attempt now
    (409 once it succeeded)."""
    delivery = await service.retry(session, runtime, caller, delivery_id)
    return ok(delivery_entry(await service.logged(session, delivery)))
