"""Bulk payouts (issue 28): up to 1,000 payout requests in one call, each an ordinary payout.

The request only stores the batch and its items, in one transaction, and answers at once:
each item is validated on its own (the body of `POST /payouts`, with an `external_id` of its
own, not repeated in the batch), and a refused item keeps its error while the others go on.
The worker then makes the items into payouts in the order sent (`process`), each through
`PayoutService.create` under the batch's caller, so that every payout rule holds (bounds,
caps, approval, maker-checker, balance), and each in its own transaction: a live payout's
call protocol commits before it calls the operator, and a crash mid-batch loses no item
made. A rerun makes only the items not recorded yet, and the item's own `external_id`
makes `create` idempotent: an item made but not recorded before a crash is found again,
never paid twice. A business refusal (insufficient funds, a cap…) is the item's error, the
same error object the API would have answered.

The batch completes when every item is refused or has a final payout, once
(`payout_batch.completed`), under the batch's row lock: at the end of `process`, or when
the last of its payouts ends later (an operator's answer, an approval), from the payout's
final transition (`payout_ended`, wired into the payouts domain), never by a timer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Text, and_, bindparam, cast, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.events import service as events
from cauri.kit.errors import CauriError, Conflict, InvalidRequest, MerchantInactive, NotFound
from cauri.kit.ids import prefixed
from cauri.kit.pagination import Page
from cauri.kit.prepared import Prepared
from cauri.kit.validation_messages import validation_error
from cauri.merchants.caller import Caller
from cauri.models import Merchant, Payout, PayoutBatch, PayoutBatchItem, lookups
from cauri.models.payout_batches import COMPLETED, PROCESSING
from cauri.operators.protocol import Outcome
from cauri.payout_batches import jobs
from cauri.payout_batches.jobs import BatchJob
from cauri.payout_batches.schemas import Counts, Item, PayoutBatchCreate, batch_object
from cauri.payouts.schemas import PayoutCreate
from cauri.payouts.service import payouts
from cauri.runtime import Runtime

_ITEMS = PayoutBatchItem
_BY_REFERENCE = lookups.ByReference(
    PayoutBatch, PayoutBatch.reference, "Lot de transferts introuvable."
)


def _refusal(error: CauriError) -> dict[str, Any]:
    """The item's error: the error object of the API's envelope (spec: Errors)."""
    shown: dict[str, Any] = error.envelope()["error"]
    return shown


def _stored(body: PayoutCreate) -> dict[str, Any]:
    """The request as JSON; the amount as its exact decimal text (a JSON float would not be
    the number sent)."""
    return body.model_dump(mode="json", exclude_none=True)


def _request(stored: Mapping[str, Any]) -> PayoutCreate:
    return PayoutCreate.model_validate({**stored, "amount": Decimal(stored["amount"])})


def _item_rows(reference: str, items: Sequence[Any]) -> list[dict[str, Any]]:
    """Each item validated on its own: the payout request it stores, or its error. An
    `external_id` is required of every item (it is what makes its payout idempotent), and
    one the batch already used is refused (the item before it has it)."""
    rows = []
    used: dict[str, int] = {}
    for position, item in enumerate(items):
        sent = item.get("external_id") if isinstance(item, dict) else None
        external_id = sent if isinstance(sent, str) else None
        request, error = None, None
        try:
            body = PayoutCreate.model_validate(item)
        except ValidationError as invalid:
            error = _refusal(validation_error(invalid))
        else:
            if body.external_id is None:
                error = _refusal(
                    InvalidRequest.field(
                        "external_id", "Chaque élément d'un lot doit avoir son external_id."
                    )
                )
            elif body.external_id in used:
                error = _refusal(
                    InvalidRequest.field(
                        "external_id",
                        f"Cet external_id est déjà celui de l'élément "
                        f"{used[body.external_id]} du lot.",
                    )
                )
            else:
                request = _stored(body)
        if external_id is not None:
            used.setdefault(external_id, position)
        rows.append(
            {
                "batch_reference": reference,
                "position": position,
                "external_id": external_id,
                "request": request,
                "error": error,
            }
        )
    return rows


@dataclass(frozen=True)
class _Next:
    """The next item to make, and the merchant's status now."""

    position: int
    request: dict[str, Any]
    merchant_status: str


class PayoutBatchService:
    async def create(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, body: PayoutBatchCreate
    ) -> tuple[PayoutBatch, bool]:
        """The batch and its items, and the job that makes them; with an `external_id`
        already used, the batch made then (False), whatever this body says (as payouts)."""
        now = runtime.clock.now()
        row = {
            "reference": prefixed("pyb"),
            "merchant_id": caller.merchant_id,
            "livemode": caller.livemode,
            "external_id": body.external_id,
            "status": PROCESSING,
            "item_count": len(body.items),
            "created_at": now,
            "updated_at": now,
        }
        batch = await lookups.inserted_unless_replayed(session, PayoutBatch, row)
        if batch is None:  # a replay: a concurrent one waited on the unique index
            return await self.get(session, caller, body.external_id), False
        items = _item_rows(batch.reference, body.items)
        await session.execute(insert(PayoutBatchItem), items)
        if any(item["request"] is not None for item in items):
            await jobs.PROCESS.enqueue(
                session, BatchJob(batch.reference), livemode=batch.livemode, now=now
            )
        else:  # every item refused: nothing to wait for
            await self.complete_if_final(session, runtime, batch.reference)
        return batch, True

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> PayoutBatch:
        """By reference or by the merchant's external_id, within the caller's environment."""
        return await _BY_REFERENCE.get(session, caller, reference)

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, status: str | None
    ) -> tuple[Sequence[PayoutBatch], int]:
        kept = [] if status is None else [PayoutBatch.status == status]
        return await lookups.newest_of_yours(
            session, caller, PayoutBatch, PayoutBatch.reference, page, *kept
        )

    async def items(self, session: AsyncSession, reference: str) -> tuple[Sequence[Item], Counts]:
        """The batch's items in the order sent, and its counts, read together."""
        statement = (
            select(_ITEMS.external_id, _ITEMS.payout_reference, _ITEMS.error, Payout.status)
            .outerjoin(Payout, Payout.reference == _ITEMS.payout_reference)
            .where(_ITEMS.batch_reference == reference)
            .order_by(_ITEMS.position)
        )
        rows = (await session.execute(statement)).all()
        statuses = [
            "refused" if error is not None else status or "queued" for _, _, error, status in rows
        ]
        counts = Counts(total=len(rows), **{name: statuses.count(name) for name in _STATES})
        return [Item(external_id, payout, error) for external_id, payout, error, _ in rows], counts

    async def counts(self, session: AsyncSession, references: Sequence[str]) -> dict[str, Counts]:
        """The counts of these batches (a page of a list), in one query."""
        made = _ITEMS.payout_reference.is_not(None)
        queued = and_(_ITEMS.payout_reference.is_(None), _ITEMS.error.is_(None))
        statement = (
            select(
                _ITEMS.batch_reference,
                func.count(),
                func.count().filter(queued),
                func.count().filter(_ITEMS.error.is_not(None)),
                *(
                    func.count().filter(and_(made, Payout.status == outcome.value))
                    for outcome in (Outcome.PENDING, Outcome.SUCCEEDED, Outcome.FAILED)
                ),
            )
            .outerjoin(Payout, Payout.reference == _ITEMS.payout_reference)
            .where(_ITEMS.batch_reference.in_(references))
            .group_by(_ITEMS.batch_reference)
        )
        return {
            reference: Counts(*numbers)
            for reference, *numbers in (await session.execute(statement)).all()
        }

    async def process(self, session: AsyncSession, runtime: Runtime, reference: str) -> None:
        """The job: makes each item not made yet, in order, each committed on its own, then
        completes the batch if every item is final. Run again (a crash, a lost lease), it
        goes on where the last commit left it; two runs at once (a lease lost while the
        first still runs) may both reach an item, and its `external_id` makes it one payout.

        Its reads and writes of the items are prepared statements past the session
        (cauri.kit.prepared), each on its own when no transaction has begun: a test payout
        its simulator pays at once is then one statement of its own (as through the API),
        and the balance's row is locked for that statement only, not across the item's
        record; a payout recorded in a transaction has its item recorded in it."""
        batch = await session.get(PayoutBatch, reference)
        if batch is None or batch.status == COMPLETED:
            return
        # Plain values: a refused item's rollback expires every row the session holds.
        caller = Caller(batch.merchant_id, batch.livemode)
        await session.commit()  # each item in a transaction of its own
        after = -1
        while (item := await self._next(session, caller, reference, after)) is not None:
            await self._make(session, runtime, caller, reference, item)
            await session.commit()
            after = item.position
        await self.complete_if_final(session, runtime, reference)

    async def _next(
        self, session: AsyncSession, caller: Caller, reference: str, after: int
    ) -> _Next | None:
        """The first item after `after` not made yet, with the merchant's status now (a
        live account suspended mid-batch pays no more)."""
        row = await _NEXT.fetchrow(
            session,
            {"reference": reference, "after": after, "merchant_id": caller.merchant_id},
        )
        return None if row is None else _Next(row[0], json.loads(row[1]), row[2])

    async def _make(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, reference: str, item: _Next
    ) -> None:
        """The item's payout, or its refusal: rolled back as the API rolls back a refused
        request, but a refusal that records a fact (a payout its operator refused at once,
        kept `failed`), which is kept with the item's error, as the API keeps it."""
        made = await self._made(session, caller, item)
        try:
            if made is not None:
                # Made by an earlier run that died before recording it: whatever holds now
                # (a suspension, other terms), it was sent, and it is the item's payout.
                payout, created = made, False
            else:
                if caller.livemode and item.merchant_status != "active":
                    raise MerchantInactive()
                payout, created = await payouts.create(
                    session, runtime, caller, _request(item.request), batch=reference
                )
        except CauriError as refusal:
            if not refusal.keeps_writes:
                await session.rollback()
            await self._record(session, reference, item.position, error=_refusal(refusal))
            return
        if not created and payout.batch_reference is None:
            # The item's external_id was a payout's already: its end completes this batch.
            await session.execute(
                update(Payout)
                .where(Payout.reference == payout.reference, Payout.batch_reference.is_(None))
                .values(batch_reference=reference)
                .execution_options(synchronize_session=False)
            )
        await self._record(session, reference, item.position, payout=payout.reference)

    async def _made(self, session: AsyncSession, caller: Caller, item: _Next) -> Payout | None:
        """The payout already made under the item's external_id, if one was."""
        found: Payout | None = await session.scalar(
            select(Payout).where(
                Payout.merchant_id == caller.merchant_id,
                Payout.livemode == caller.livemode,
                Payout.external_id == item.request["external_id"],
            )
        )
        return found

    async def _record(
        self,
        session: AsyncSession,
        reference: str,
        position: int,
        *,
        payout: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """What became of the item, unless a run at once recorded it first."""
        values = {"reference": reference, "position": position, "payout": payout, "error": error}
        await _RECORD.fetch(session, values)

    async def resume(self, session: AsyncSession, runtime: Runtime, reference: str) -> PayoutBatch:
        """Its job queued again (once), for a batch still processing whose job gave up (an
        item that kept failing on something other than a refusal, a database away for its
        every attempt): the items made are found again, never made twice."""
        batch = await session.get(PayoutBatch, reference)
        if batch is None:
            raise NotFound(f"Lot de transferts introuvable : {reference}.")
        if batch.status == COMPLETED:
            raise Conflict(f"Le lot {reference} est terminé.")
        await jobs.PROCESS.enqueue_once(
            session, BatchJob(reference), livemode=batch.livemode, now=runtime.clock.now()
        )
        return batch

    async def complete_if_final(
        self, session: AsyncSession, runtime: Runtime, reference: str
    ) -> None:
        """Completes the batch once every item is refused or has a final payout, with its
        event. Under the batch's lock, so that two payouts ending at once complete it once:
        each end's check runs after that end committed, and the last one sees them all."""
        batch = await lookups.locked(session, PayoutBatch, PayoutBatch.reference == reference)
        if batch is None or batch.status == COMPLETED:
            return
        counts = (await self.counts(session, [reference]))[reference]
        if not counts.final:
            return
        now = runtime.clock.now()
        batch.status = COMPLETED
        batch.completed_at = now
        batch.updated_at = now
        await session.flush()
        await events.emit(
            session,
            merchant_id=batch.merchant_id,
            livemode=batch.livemode,
            type="payout_batch.completed",
            # Without its items (up to 1,000): `GET /payout-batches/{reference}` has them.
            data=batch_object(batch, counts),
            at=now,
        )

    async def payout_ended(self, session: AsyncSession, runtime: Runtime, payout: Payout) -> None:
        """A batched payout reached its final state (wired into the payouts domain): each
        batch that lists it is checked for completion, by a job queued in this transaction
        (so that it runs after this end is committed), once however many end at once."""
        listing = select(_ITEMS.batch_reference).where(_ITEMS.payout_reference == payout.reference)
        batches = set((await session.scalars(listing)).all())
        if payout.batch_reference is not None:
            batches.add(payout.batch_reference)
        for reference in sorted(batches):
            await jobs.CHECK_COMPLETION.enqueue_once(
                session, BatchJob(reference), livemode=payout.livemode, now=runtime.clock.now()
            )


_STATES = ("queued", "refused", "pending", "succeeded", "failed")

_NEXT = Prepared(
    select(_ITEMS.position, cast(_ITEMS.request, Text), Merchant.status)
    .join(Merchant, Merchant.id == bindparam("merchant_id"))
    .where(
        _ITEMS.batch_reference == bindparam("reference"),
        _ITEMS.position > bindparam("after"),
        _ITEMS.payout_reference.is_(None),
        _ITEMS.error.is_(None),
        _ITEMS.request.is_not(None),
    )
    .order_by(_ITEMS.position)
    .limit(1)
)
_RECORD = Prepared(
    update(PayoutBatchItem)
    .where(
        _ITEMS.batch_reference == bindparam("reference"),
        _ITEMS.position == bindparam("position"),
        _ITEMS.payout_reference.is_(None),
        _ITEMS.error.is_(None),
    )
    .values(payout_reference=bindparam("payout"), error=bindparam("error"))
)


payout_batches = PayoutBatchService()
