"""Webhook configuration, test notification and delivery log (spec: Endpoints, Webhooks)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, ok
from cauri.kit.pagination import PageDep, listing
from cauri.merchants.auth import CallerDep
from cauri.webhooks import service
from cauri.webhooks.schemas import EndpointUpdate, delivery_entry, endpoint_object

router = APIRouter(route_class=UnitOfWorkRoute, tags=["webhooks"])


@router.put("/webhooks/endpoint")
async def set_endpoint(
    body: EndpointUpdate, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    return ok(endpoint_object(await service.configure(session, runtime, caller, body)))


@router.get("/webhooks/endpoint")
async def get_endpoint(caller: CallerDep, session: SessionDep) -> dict[str, Any]:
    return ok(endpoint_object(await service.endpoint(session, caller)))


@router.post("/webhooks/test")
async def send_test(caller: CallerDep, session: SessionDep, runtime: RuntimeDep) -> dict[str, Any]:
    result = await service.send_test(session, runtime, caller)
    data: dict[str, Any] = {
        "sent": result.sent,
        "delivery_id": str(result.delivery_id),
        "url": result.url,
    }
    if not result.sent:
        data["reason"] = service.NO_ENDPOINT_REASON
    return ok(data)


@router.get("/webhooks/deliveries")
async def list_deliveries(caller: CallerDep, session: SessionDep, page: PageDep) -> dict[str, Any]:
    rows, total = await service.list_deliveries(session, caller, page)
    return listing([delivery_entry(row) for row in rows], page, total)


@router.post("/webhooks/deliveries/{delivery_id}/retry")
async def retry_delivery(
    delivery_id: str, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> dict[str, Any]:
    return ok(delivery_entry(await service.retry(session, runtime, caller, delivery_id)))
