"""Money leaving a merchant's balance (or a plan's escrow) through an operator: the one
lifecycle of payouts, refunds and plans' cancellation refunds.

A row is debited when it is sent and re-credited only on a definitive failure; whether its
money is out is the row's `debited` answer (a held payout and one refused at initiation
never were).

`Flow.initiate` is the one way a row is sent: its route, then (offline) the adapter's answer,
then the debit, at one point for every operator, then the answer applied. With an offline
adapter (the test-mode simulator) the adapter is asked before the debit, so that a refusal
writes no debit (no debit and reversal pair either). Through an operator's network the call
protocol holds no lock across the call (cauri.calls): the debit is committed with the row
before the request leaves, and a refusal, then or later, is undone by the reverse movement;
an unknown outcome keeps the money out until the operator's answer is known.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Generic, NoReturn, Protocol, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import availability, requests
from cauri.calls import service as calls
from cauri.calls.availability import Route, State
from cauri.calls.requests import Action
from cauri.connectors.registry import Routed
from cauri.disbursements.jobs import RowJob
from cauri.events import service as events
from cauri.kit.errors import CauriError, InsufficientFunds
from cauri.ledger import movements
from cauri.ledger.movements import Disbursal, Holder, Movement
from cauri.ledger.service import Debit, Overdraft
from cauri.models import lookups
from cauri.operators.protocol import Disbursement, OperatorResult, Outcome
from cauri.runtime import Runtime
from cauri.worker.jobs import JobKind


class Disbursed(Protocol):
    """A row whose money an operator sends: a payout, a refund or a plan refund."""

    reference: str
    merchant_id: str
    livemode: bool
    status: str
    amount: int
    currency: str
    operator: str
    phone_number: str
    reason: str | None
    debited: bool
    operator_reference: str | None
    failure_reason: str | None
    updated_at: datetime
    completed_at: datetime | None


Row = TypeVar("Row", bound=Disbursed)

# Finishes one row with (outcome, reason): the domain's own final steps around Flow.finish.
Finish = Callable[[Outcome, str | None], Awaitable[None]]


def disbursement(row: Disbursed) -> Disbursement:
    return Disbursement(
        reference=row.reference,
        operator=row.operator,
        amount=row.amount,
        currency=row.currency,
        phone_number=row.phone_number,
        reason=row.reason,
    )


def _no_fee(row: Disbursed) -> int:
    return 0


@dataclass(frozen=True)
class Flow(Generic[Row]):
    """What differs between payouts, refunds and plan refunds; the mechanism is the
    methods."""

    model: type[Row]
    # The ledger movement of the debit (its reversal re-credits), the `<movement>.*` events
    # (if `describe`) and the subject kind of its operator calls.
    movement: Movement
    action: Action  # which route carries it
    check_job: JobKind[RowJob]  # the simulator's delayed outcome
    source: Callable[[Row], Holder]  # whose money it is
    failure: type[CauriError]  # the 402 when it cannot be sent: payout_failed, refund_failed
    unavailable: str  # its message when no operator can send it
    fee: Callable[[Row], int] = _no_fee  # what the platform keeps on top of `amount`
    request: Callable[[Row], Disbursement] = disbursement  # what the operator is asked to send
    # The event's data; None: the row emits no event (a plan's cancellation refund: the
    # spec has no event for it).
    describe: Callable[[Row], dict[str, Any]] | None = None
    refused: str | None = None  # its message when the operator refuses at once (None: default)
    # A merchant's request on a closed route is refused at once (payouts, refunds); a plan's
    # refund, owed whatever happens, is sent and waits for the route instead.
    refused_when_closed: bool = True

    @property
    def kind(self) -> str:
        return self.movement.value

    def _disbursal(self, row: Row) -> Disbursal:
        return Disbursal(
            self.movement, self.source(row), row.operator, row.amount, self.fee(row), row.reference
        )

    def paid_with(self, row: Row, at: datetime) -> Debit:
        """The debit of a row its offline adapter carried out before it was recorded, as
        the values of the statement that records it (`movements.disbursed_with`)."""
        return movements.disbursed_with(self._disbursal(row), at)

    async def lock(self, session: AsyncSession, reference: str) -> Row | None:
        return await lookups.locked(session, self.model, self.model.reference == reference)

    async def waiting(self, session: AsyncSession, reference: str) -> bool:
        """Whether the row still waits for its operator's answer (the call protocol's
        `Waiting`)."""
        model: Any = self.model  # a mapped class: its attributes are columns
        status = await session.scalar(select(model.status).where(model.reference == reference))
        return bool(status == Outcome.PENDING)

    async def debit(self, session: AsyncSession, row: Row, at: datetime) -> None:
        """Takes the row's money out: the source must cover it, else 402
        insufficient_funds with nothing written."""
        try:
            await movements.disbursed(session, self._disbursal(row), at)
        except Overdraft as exc:
            raise InsufficientFunds() from exc
        row.debited = True

    async def initiate(
        self, session: AsyncSession, runtime: Runtime, row: Row, finish: Finish
    ) -> None:
        """Sends the row, in four steps whatever the operator:
        1. its route: none, or closed for a merchant's request, is a refusal;
        2. an offline adapter (the simulator) is asked now, and its refusal is a refusal;
        3. the debit, the one point where the money leaves: the source must cover it, else
           402 insufficient_funds (DESIGN: payout checks order), the caller rolls back;
        4. the answer: through a network, the call protocol commits the debit with the
           operation before the request leaves, and applies the answer (cauri.calls);
           offline, the answer just given is applied.
        A refusal finishes the row failed with nothing taken, then raises `failure` (a
        source that would not have covered it is insufficient_funds first)."""
        routed = await self._route(session, runtime, row)
        if routed is None:
            await self._refuse(session, row, finish, "operator_unavailable", self.unavailable)
        answer = None
        if routed.adapter.decides_offline:
            answer = await requests.send(routed.adapter, self.action, self.request(row))
            if answer.outcome is Outcome.FAILED:
                await self._refuse(session, row, finish, answer.reason, self.refused)
        await self.debit(session, row, runtime.clock.now())
        if answer is None:
            await self.send(session, runtime, routed, row)
        else:
            await self.apply(session, runtime, row, answer, finish)

    async def routable(self, session: AsyncSession, runtime: Runtime, row: Row) -> bool:
        """Whether `initiate` would find a route now: a row held for approval without one
        would only fail once approved, after a person thought it sent."""
        return await self._route(session, runtime, row) is not None

    async def _route(self, session: AsyncSession, runtime: Runtime, row: Row) -> Routed | None:
        """The route that carries the row; None when there is none, or when it is closed
        and the row is a merchant's request (refused at once rather than left waiting)."""
        routed = await runtime.operators.route(session, row.operator, self.action, row.livemode)
        if routed is None or routed.adapter.decides_offline or not self.refused_when_closed:
            return routed
        route = Route(routed.connector, row.operator, self.action.value)
        if await availability.state(session, runtime, route) is State.CLOSED:
            return None
        return routed

    async def _refuse(
        self,
        session: AsyncSession,
        row: Row,
        finish: Finish,
        reason: str | None,
        message: str | None,
    ) -> NoReturn:
        """The row finished failed with nothing taken, then `failure` raised (its writes
        kept); insufficient_funds instead when the source would not have covered it."""
        if not await movements.covers(session, self._disbursal(row)):
            raise InsufficientFunds()
        await finish(Outcome.FAILED, reason)
        raise self.failure(message, reference=row.reference)

    async def send_debited(
        self, session: AsyncSession, runtime: Runtime, row: Row, finish: Finish
    ) -> None:
        """Sends a row debited earlier (a payout held for approval, debited when approved),
        from a job: with no route, it is finished failed (re-credited), never left debited
        and unsent; a refusal is recorded the same way, with no one to answer."""
        routed = await runtime.operators.route(session, row.operator, self.action, row.livemode)
        if routed is None:
            await finish(Outcome.FAILED, "operator_unavailable")
        elif routed.adapter.decides_offline:
            answer = await requests.send(routed.adapter, self.action, self.request(row))
            await self.apply(session, runtime, row, answer, finish)
        else:
            with contextlib.suppress(self.failure):
                await self.send(session, runtime, routed, row)

    async def send(self, session: AsyncSession, runtime: Runtime, routed: Routed, row: Row) -> None:
        """Sends a debited row through an operator's network (record → commit → call →
        apply); a refusal is raised once applied (the row failed, its debit re-credited)."""
        await session.flush()
        reference = str(uuid.uuid4())
        request = replace(
            self.request(row),
            reference=reference,
            callback_url=calls.callback_url(runtime, routed.connector, reference),
        )
        subject = calls.Subject(self.kind, row.reference)
        await calls.engage(session, runtime, routed, subject, self.action, request)
        await session.refresh(row)
        if row.status == Outcome.FAILED:
            raise self.failure(self.refused, reference=row.reference)

    async def apply(
        self,
        session: AsyncSession,
        runtime: Runtime,
        row: Row,
        result: OperatorResult,
        finish: Finish,
    ) -> None:
        """Applies an operator's answer about a debited, pending row."""
        if result.operator_reference is not None:
            row.operator_reference = result.operator_reference
        if result.outcome is not Outcome.PENDING:
            await finish(result.outcome, result.reason)
            return
        await session.flush()
        if result.check_after is not None:
            await self.check_job.enqueue(
                session,
                RowJob(row.reference),
                livemode=row.livemode,
                now=runtime.clock.now(),
                delay=result.check_after,
            )

    async def recheck(
        self, session: AsyncSession, runtime: Runtime, row: Row, finish: Finish
    ) -> None:
        """Asks the offline adapter again about a pending, debited row (a delayed outcome;
        an operator's network is asked by the call protocol's polls instead)."""
        adapter = runtime.operators.in_process(row.operator, row.livemode)
        if adapter is None or not adapter.decides_offline:
            return
        result = await requests.status(adapter, self.action, self.request(row))
        await self.apply(session, runtime, row, result, finish)

    async def finish(
        self,
        session: AsyncSession,
        runtime: Runtime,
        row: Row,
        outcome: Outcome,
        reason: str | None,
        *,
        callback_url: str | None = None,
    ) -> None:
        """Moves a pending row to its final state with its event, if it has one; a failure
        of a debited row re-credits its source, in the same transaction (spec: balance
        already re-credited)."""
        now = runtime.clock.now()
        if outcome is Outcome.FAILED and row.debited:
            await movements.reversed_disbursal(session, self._disbursal(row), now)
            row.debited = False
        row.status = outcome.value
        row.failure_reason = reason
        row.completed_at = now
        row.updated_at = now
        await session.flush()
        if self.describe is None:
            return
        await events.emit(
            session,
            merchant_id=row.merchant_id,
            livemode=row.livemode,
            type=f"{self.kind}.{outcome.value}",
            data=self.describe(row),
            at=now,
            callback_url=callback_url,
        )
