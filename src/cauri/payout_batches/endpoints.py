"""Payout batches over HTTP: parse, authenticate, delegate (cauri.payout_batches.service)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute, created_or_replayed, ok
from cauri.kit.openapi import ListEnvelope, answers
from cauri.kit.pagination import listing
from cauri.merchants.auth import CallerDep
from cauri.merchants.listing import ListRequestDep
from cauri.models import PayoutBatch
from cauri.payout_batches.schemas import PayoutBatchCreate, PayoutBatchObject, batch_object
from cauri.payout_batches.service import payout_batches

router = APIRouter(route_class=UnitOfWorkRoute, tags=["payout batches"])

# Only this route takes a body over the service's 256 KiB (cauri.kit.body_limit).
PATH = "/payout-batches"


async def _shown(session: AsyncSession, batch: PayoutBatch) -> dict[str, Any]:
    items, counts = await payout_batches.items(session, batch.reference)
    return batch_object(batch, counts, items)


@router.post(PATH, status_code=201, responses=answers(PayoutBatchObject, status=201, replayed=True))
async def create_payout_batch(
    body: PayoutBatchCreate, caller: CallerDep, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Up to 1,000 payouts in one call (201, `processing`): each item is the body of
    `POST /payouts` with its own `external_id`, validated on its own; a refused item has
    its `error` and the others go on. The payouts are made in order by the worker, each
    with every rule of `POST /payouts`. An `external_id` already used returns the batch
    made then (200)."""
    batch, created = await payout_batches.create(session, runtime, caller, body)
    return created_or_replayed(await _shown(session, batch), created)


@router.get(PATH, responses=answers(ListEnvelope[PayoutBatchObject]))
async def list_payout_batches(
    asked: ListRequestDep,
    status: Annotated[Literal["processing", "completed"] | None, Query()] = None,
) -> dict[str, Any]:
    """The environment's payout batches, newest first, without their items."""
    found, total = await payout_batches.list(asked.session, asked.caller, asked.page, status)
    counts = await payout_batches.counts(asked.session, [batch.reference for batch in found])
    shown = [batch_object(batch, counts[batch.reference]) for batch in found]
    return listing(shown, asked.page, total)


@router.get(f"{PATH}/{{reference}}", responses=answers(PayoutBatchObject))
async def get_payout_batch(
    reference: str, caller: CallerDep, session: SessionDep
) -> dict[str, Any]:
    """One batch with its items in the order sent, by its reference or your
    `external_id`."""
    return ok(await _shown(session, await payout_batches.get(session, caller, reference)))
