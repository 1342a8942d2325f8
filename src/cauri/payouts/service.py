"""Payouts: from the merchant's balance to a Mobile Money number (spec: Payouts, Payout state
table, Test mode for payouts, Limits; DESIGN: payouts held for approval).

Regimes: without `phone_number` the money goes to the merchant's own validated payout
account, with no cap. With `phone_number` and `operator` it goes to a third party: in live
mode a per-payout cap, a 24-hour cap (failed payouts excluded) and, above the approval
threshold, a hold until `cauri payouts approve` or `reject`. Caps and limits are amounts
the beneficiary receives (`amount`), in the currency's minor unit.

Maker-checker: a held payout above the platform's `payout_dual_approval_above` (in its
currency) is paid on the approvals of two different people; nobody approves twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache, partial
from typing import Any, cast

import asyncpg
from sqlalchemy import Table, func, select, true
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import approvers
from cauri.audit.actor import Actor
from cauri.calls import service as calls
from cauri.calls.requests import Action
from cauri.disbursements import lifecycle
from cauri.disbursements.jobs import RowJob
from cauri.events import service as events
from cauri.kit import phone
from cauri.kit.errors import (
    Conflict,
    InsufficientFunds,
    InvalidRequest,
    NotFound,
    PayoutFailed,
    PayoutLimitExceeded,
)
from cauri.kit.ids import prefixed
from cauri.kit.money import EXPONENT, format_major, to_minor
from cauri.kit.pagination import Page
from cauri.kit.period import Period
from cauri.kit.prepared import Prepared
from cauri.kit.wording import status_word
from cauri.ledger import movements
from cauri.ledger import service as ledger_service
from cauri.ledger.movements import Holder, Movement
from cauri.merchants.caller import Caller
from cauri.merchants.contract import PAYOUT, read_terms
from cauri.models import Merchant, Payout, PayoutApproval, PlatformSettings, lookups, rows
from cauri.models.payouts import APPROVAL_STATES
from cauri.operators import catalogue
from cauri.operators.catalogue import PaymentMode
from cauri.operators.protocol import OperatorResult, Outcome
from cauri.payouts import jobs
from cauri.payouts.schemas import PayoutCreate, payout_object
from cauri.platform.service import fixed_column
from cauri.runtime import Runtime
from cauri.worker import queue

_PAYOUTS = cast(Table, Payout.__table__)


# A payout its operator paid before it was recorded (the simulator, `decides_offline`): its
# row, the balance's debit with its ledger transaction, and its event, in ONE statement run
# outside the request's transaction when none has begun (a third party's test payout), so
# that the balance's row is locked for that statement and its commit only
# (`ledger.service.debited`). Nothing is written when `external_id` is taken (no row
# returned) or the balance does not cover it (the statement fails). The row's columns are
# those `_row` describes, as on the path that records it first; the worker is woken as for a
# payment (cauri.payments.service). Compiled once per shape of row.
@dataclass(frozen=True)
class _Paid:
    statement: Prepared
    debit: ledger_service.Debited
    event: events.Emitted

    def parameters(
        self, row: dict[str, Any], debit: ledger_service.Debit, event: events.Emission
    ) -> dict[str, Any]:
        return row | self.debit.values(debit) | self.event.values(event)


@cache
def _paid(columns: tuple[str, ...]) -> _Paid:
    pyo = (
        lookups.unless_replayed(rows.inserted(_PAYOUTS, columns), _PAYOUTS)
        .returning(_PAYOUTS.c.reference)
        .cte("pyo")
    )
    debit = ledger_service.debited(pyo)
    event = events.emitted(pyo)
    statement = (
        select(pyo.c.reference)
        .join_from(pyo, queue.woken_by(event.job), true())
        .add_cte(debit.appended.postings)
    )
    return _Paid(Prepared(statement), debit, event)


PAYOUT_MIN = 10
PAYOUT_MAX = 1_000_000
CAP_WINDOW = timedelta(hours=24)

REQUIRED, APPROVED, REJECTED = APPROVAL_STATES


@dataclass(frozen=True)
class Beneficiary:
    mode: PaymentMode
    phone_number: str
    third_party: bool


def _source(payout: Payout) -> Holder:
    return movements.balance_of(payout.merchant_id, payout.livemode, payout.currency)


def _fee(payout: Payout) -> int:
    return payout.fee_amount


# The debit: total_debited leaves the balance, the operator sends `amount`, the platform
# keeps the fee.
_FLOW = lifecycle.Flow(
    model=Payout,
    movement=Movement.PAID_OUT,
    action=Action.DISBURSE,
    check_job=jobs.CHECK_STATUS,
    source=_source,
    failure=PayoutFailed,
    unavailable="Le service de transfert de cet opérateur est indisponible.",
    fee=_fee,
    describe=payout_object,
)


def _payout_mode(operator: str, currency: str | None) -> PaymentMode:
    """The Mobile Money mode that pays, in the currency asked for if any (else its own)."""
    mode = catalogue.find(operator)
    if mode is None or mode.is_card or mode.country_code is None:
        raise InvalidRequest.field(
            "operator", f"Opérateur Mobile Money inconnu pour un transfert : {operator}."
        )
    if currency is not None and mode.currency != currency:
        raise InvalidRequest.field(
            "currency", f"{mode.operator} paie en {mode.currency}, pas en {currency}."
        )
    return mode


def _check_bounds(amount: int, fee: int, currency: str) -> None:
    """10 to 1,000,000, fees included in the bound: the amount received is at least 10
    and the total debited at most 1,000,000."""
    unit = 10 ** EXPONENT[currency]
    if amount < PAYOUT_MIN * unit or amount + fee > PAYOUT_MAX * unit:
        raise InvalidRequest.field(
            "amount",
            f"Le montant ({format_major(amount, currency)}) doit être d'au moins {PAYOUT_MIN} "
            f"et le total débité ({format_major(amount + fee, currency)}, frais compris) "
            f"d'au plus {PAYOUT_MAX}.",
        )


def check_per_payout(merchant: Merchant, amount: int, currency: str) -> None:
    """The merchant's cap on one live third-party payout (`cauri merchants set-limits`)."""
    if merchant.limit_per_payout is not None and amount > merchant.limit_per_payout:
        raise PayoutLimitExceeded(
            f"Le montant dépasse le plafond par transfert vers un tiers "
            f"({format_major(merchant.limit_per_payout, currency)})."
        )


@dataclass(frozen=True)
class Quote:
    """A payout's terms before it is written (`PayoutService.quote`): who receives it, the
    merchant's row when its limits apply (locked), what is sent and the fee on top."""

    beneficiary: Beneficiary
    merchant: Merchant | None
    amount: int
    fee: int


def _row(
    caller: Caller,
    body: PayoutCreate,
    beneficiary: Beneficiary,
    amount: int,
    fee: int,
    now: datetime,
    batch: str | None = None,
) -> dict[str, Any]:
    """The new payout's row, by column: what both paths write (`create`, `_paid_at_once`)."""
    return {
        "reference": prefixed("pyo"),
        "merchant_id": caller.merchant_id,
        "livemode": caller.livemode,
        "external_id": body.external_id,
        "status": Outcome.PENDING.value,
        "amount": amount,
        "fee_amount": fee,
        "currency": beneficiary.mode.currency,
        "operator": beneficiary.mode.operator,
        "phone_number": beneficiary.phone_number,
        "third_party": beneficiary.third_party,
        "beneficiary_name": body.beneficiary_name,
        "reason": body.reason,
        "metadata": body.metadata,
        "batch_reference": batch,
        "created_at": now,
        "updated_at": now,
    }


_BY_REFERENCE = lookups.ByReference(Payout, Payout.reference, "Transfert introuvable.")


# What becomes of a batched payout's end (cauri.payout_batches, wired by cauri.wiring): the
# payouts domain imports no batch.
Ended = Callable[[AsyncSession, Runtime, Payout], Awaitable[None]]


class PayoutService:
    batched_payout_ended: Ended | None = None

    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PayoutCreate,
        *,
        batch: str | None = None,
    ) -> tuple[Payout, bool]:
        """Returns the payout and whether it was created (False: an idempotent replay).
        `batch`: the reference of the payout batch it is made for, whose completion its end
        may bring."""
        quote = await self.quote(session, caller, body)
        beneficiary, merchant = quote.beneficiary, quote.merchant
        amount = quote.amount
        row = _row(caller, body, beneficiary, amount, quote.fee, runtime.clock.now(), batch)
        if merchant is None:  # no cap and no approval applies
            paid = await self._paid_at_once(session, runtime, caller, row)
            if paid is not None:
                return paid
        payout = await self._record(session, row)
        if payout is None:
            return await self.get(session, caller, body.external_id or ""), False
        if merchant is not None:
            await self._check_caps(session, merchant, payout)
            threshold = merchant.approval_threshold
            # Without a route it is refused now, as below the threshold (issue 27, friction 4).
            if (
                threshold is not None
                and amount > threshold
                and await _FLOW.routable(session, runtime, payout)
            ):
                payout.approval = REQUIRED
                await session.flush()
                return payout, True
        await self._initiate(session, runtime, payout)
        return payout, True

    async def quote(self, session: AsyncSession, caller: Caller, body: PayoutCreate) -> Quote:
        """What `create` would send, to whom and at what fee, refused as `create` refuses
        it before writing anything (payout account, operator, terms, bounds): nothing is
        written."""
        beneficiary, merchant = await self._beneficiary(session, caller, body)
        currency = beneficiary.mode.currency
        amount = to_minor(body.amount, currency)
        terms = await read_terms(session, caller.merchant_id, PAYOUT)
        if terms.disabled:
            raise InvalidRequest("Les transferts ne sont pas ouverts sur ce compte.")
        fee = terms.fee(amount, currency)
        _check_bounds(amount, fee, currency)
        return Quote(beneficiary, merchant, amount, fee)

    async def _record(self, session: AsyncSession, row: dict[str, Any]) -> Payout | None:
        """Inserts the payout `row` describes, pending; None when its `external_id` is
        taken (a concurrent replay waits on the unique index, then finds the first one)."""
        return await lookups.inserted_unless_replayed(session, Payout, rows.attributes(Payout, row))

    async def _paid_at_once(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, row: dict[str, Any]
    ) -> tuple[Payout, bool] | None:
        """A payout its operator pays as soon as it is asked, offline (the simulator), asked
        before anything is written: recorded `succeeded` with its debit and its event in one
        statement (`_paid`), or, when the balance does not cover it, 402
        insufficient_funds with nothing written. None: any other answer or operator, for
        the path that records the payout first."""
        adapter = runtime.operators.in_process(row["operator"], row["livemode"])
        if adapter is None or not adapter.decides_offline:
            return None
        answer = await adapter.disburse(lifecycle.disbursement(rows.build(Payout, row)))
        if answer.outcome is not Outcome.SUCCEEDED:
            return None
        now = row["updated_at"]
        # What the other path's `_initiate` leaves on the row once paid.
        row = row | {
            "status": answer.outcome.value,
            "operator_reference": answer.operator_reference,
            "failure_reason": answer.reason,
            "approval": None,
            "debited": True,
            "completed_at": now,
        }
        payout = rows.build(Payout, row)
        event = events.Emission(
            event_id=uuid.uuid4(),
            merchant_id=payout.merchant_id,
            livemode=payout.livemode,
            type=f"payout.{answer.outcome.value}",
            data=payout_object(payout),
            at=now,
        )
        paid = _paid(tuple(row))
        parameters = paid.parameters(row, _FLOW.paid_with(payout, now), event)
        try:
            written = await paid.statement.fetchrow(session, parameters)
        except asyncpg.PostgresError as error:
            if error.sqlstate == ledger_service.NOT_COVERED:
                raise InsufficientFunds() from error
            raise
        if written is None:  # its external_id is taken: the first payout is the answer
            return await self.get(session, caller, payout.external_id or ""), False
        return payout, True

    async def _beneficiary(
        self, session: AsyncSession, caller: Caller, body: PayoutCreate
    ) -> tuple[Beneficiary, Merchant | None]:
        """Who receives the money, and the merchant row when its limits apply (a live
        third-party payout): then it is locked, so that concurrent third-party payouts of
        the merchant add up against its caps one at a time."""
        if body.phone_number is None:
            merchant = await session.get(Merchant, caller.merchant_id)
            if merchant is None or not (
                merchant.payout_validated and merchant.payout_phone and merchant.payout_operator
            ):
                raise InvalidRequest.field(
                    "phone_number",
                    "Aucun compte de transfert validé sur ce compte : indiquez phone_number "
                    "et operator, ou faites valider votre compte de transfert.",
                )
            mode = _payout_mode(merchant.payout_operator, body.currency)
            return Beneficiary(mode, merchant.payout_phone, third_party=False), None
        if body.operator is None:
            raise InvalidRequest.field(
                "operator", "L'opérateur est obligatoire quand phone_number est indiqué."
            )
        mode = _payout_mode(body.operator, body.currency)
        number = phone.normalize(body.phone_number, mode.country_code)
        beneficiary = Beneficiary(mode, number, third_party=True)
        if not caller.livemode:  # spec: in test, caps and approval never apply
            return beneficiary, None
        # FOR NO KEY UPDATE: serializes the cap checks of the merchant's live third-party
        # payouts without blocking the rows that merely reference the merchant (payments,
        # events, other payouts take a key-share lock on it).
        merchant = (
            await session.scalars(
                select(Merchant)
                .where(Merchant.id == caller.merchant_id)
                .with_for_update(key_share=True)
                .execution_options(populate_existing=True)
            )
        ).one()
        return beneficiary, merchant

    async def _check_caps(self, session: AsyncSession, merchant: Merchant, payout: Payout) -> None:
        check_per_payout(merchant, payout.amount, payout.currency)
        if merchant.limit_daily is None:
            return
        # Counts this payout (inserted above) and every other third-party payout of the
        # last 24 hours that has not failed, held ones included.
        cumulated = await session.scalar(
            select(func.coalesce(func.sum(Payout.amount), 0)).where(
                Payout.merchant_id == payout.merchant_id,
                Payout.livemode == payout.livemode,
                Payout.third_party,
                Payout.status != Outcome.FAILED.value,
                Payout.created_at > payout.created_at - CAP_WINDOW,
            )
        )
        if int(cumulated or 0) > merchant.limit_daily:
            raise PayoutLimitExceeded(
                f"Le plafond de transferts vers des tiers sur 24 heures "
                f"({format_major(merchant.limit_daily, payout.currency)}) serait dépassé."
            )

    async def _initiate(self, session: AsyncSession, runtime: Runtime, payout: Payout) -> None:
        await _FLOW.initiate(
            session, runtime, payout, partial(self._finish, session, runtime, payout)
        )

    async def _finish(
        self,
        session: AsyncSession,
        runtime: Runtime,
        payout: Payout,
        outcome: Outcome,
        reason: str | None,
    ) -> None:
        """A failure re-credits what was debited, if it was (held and refused payouts
        never were). A batched payout's end may complete its batch."""
        await _FLOW.finish(session, runtime, payout, outcome, reason)
        if payout.batch_reference is not None:
            if self.batched_payout_ended is None:
                raise RuntimeError("no payout batches wired: cauri.wiring.wire() first")
            await self.batched_payout_ended(session, runtime, payout)

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> Payout:
        """By reference or by the merchant's external_id, within the caller's environment."""
        return await _BY_REFERENCE.get(session, caller, reference)

    async def list(
        self,
        session: AsyncSession,
        caller: Caller,
        page: Page,
        status: str | None,
        period: Period,
    ) -> tuple[Sequence[Payout], int]:
        kept = [] if status is None else [Payout.status == status]
        kept.extend(period.conditions(Payout.created_at))
        return await lookups.newest_of_yours(session, caller, Payout, Payout.reference, page, *kept)

    async def _held(self, session: AsyncSession, reference: str) -> Payout:
        payout = await _FLOW.lock(session, reference)
        if payout is None:
            raise NotFound(f"Transfert introuvable : {reference}.")
        if payout.status != Outcome.PENDING or payout.approval != REQUIRED:
            raise Conflict(f"Le transfert {reference} n'attend pas d'approbation.")
        return payout

    async def approve(
        self, session: AsyncSession, runtime: Runtime, reference: str, approver: Actor
    ) -> Payout:
        """`cauri payouts approve`: records the approver's approval; once the payout has
        the approvals it needs (`approvals_needed`), debits the balance (a balance that no
        longer covers it refuses the approval, which is not recorded, and the payout stays
        held) and has the worker send it. Under the payout's lock, so that simultaneous
        approvals are counted one at a time and the payout is paid once."""
        payout = await self._held(session, reference)
        now = runtime.clock.now()
        added = await session.scalar(
            insert(PayoutApproval)
            .values(
                payout_reference=payout.reference,
                approver=approver.key,
                approver_name=approver.name,
                staff_account_id=approver.staff_account_id,
                at=now,
            )
            .on_conflict_do_nothing(
                index_elements=[PayoutApproval.payout_reference, PayoutApproval.approver]
            )
            .returning(PayoutApproval.id)
        )
        if added is None:
            raise Conflict(
                f"Vous avez déjà approuvé le transfert {reference} : l'approbation d'une "
                "autre personne est nécessaire."
            )
        given = await self.approvals(session, reference)
        needed = await self.approvals_needed(session, payout)
        if needed > 1:
            # The rules of every two-person money action (cauri.audit.approvers); a refusal
            # rolls this approval back with the rest.
            approvers.named(approver)
            for earlier in given:
                if earlier.approver != approver.key:
                    await approvers.check_second(
                        session,
                        Actor.recorded(earlier.approver_name, earlier.staff_account_id),
                        approver,
                        now,
                    )
        if len(given) < needed:
            payout.updated_at = now
            await session.flush()
            return payout
        try:
            await _FLOW.debit(session, payout, now)
        except InsufficientFunds as exc:
            raise InsufficientFunds(
                f"Approbation refusée : le solde ne couvre pas "
                f"{format_major(payout.total_debited, payout.currency)} (frais compris) ; "
                f"le transfert {reference} reste en attente d'approbation."
            ) from exc
        payout.approval = APPROVED
        payout.updated_at = now
        await session.flush()
        await jobs.SEND_APPROVED.enqueue(
            session,
            RowJob(payout.reference),
            livemode=payout.livemode,
            now=now,
        )
        return payout

    async def approvals_needed(self, session: AsyncSession, payout: Payout) -> int:
        """Two above the platform's `payout_dual_approval_above` in the payout's currency
        (its setting when the approval is given), else one."""
        column = PlatformSettings.__table__.c[
            fixed_column("payout_dual_approval_above", payout.currency)
        ]
        above = await session.scalar(select(column).where(PlatformSettings.id == 1))
        return 2 if above is not None and payout.amount > above else 1

    async def approvals(self, session: AsyncSession, reference: str) -> Sequence[PayoutApproval]:
        """The payout's approvals, in the order they were given."""
        return await self.approvals_of(session, [reference])

    async def approvals_of(
        self, session: AsyncSession, references: Sequence[str]
    ) -> Sequence[PayoutApproval]:
        """The approvals of these payouts in the order they were given (for a list of
        payouts): under the payout's lock, one after the other."""
        statement = (
            select(PayoutApproval)
            .where(PayoutApproval.payout_reference.in_(references))
            .order_by(PayoutApproval.id)
        )
        return (await session.scalars(statement)).all()

    async def reject(self, session: AsyncSession, runtime: Runtime, reference: str) -> Payout:
        """`cauri payouts reject`: failed, nothing was debited, payout.failed emitted."""
        payout = await self._held(session, reference)
        payout.approval = REJECTED
        await self._finish(session, runtime, payout, Outcome.FAILED, "approval_rejected")
        return payout

    async def send_approved(self, session: AsyncSession, runtime: Runtime, reference: str) -> None:
        """The job after an approval. Once an operation was recorded for the payout (a run
        of this job that sent it, then died), only that operation's answer ends it: its
        status queries go through the connector it names, whatever the routes say now.
        Otherwise, with nothing to send it through, the payout fails and the balance is
        re-credited: it never stays debited and unsent."""
        payout = await _FLOW.lock(session, reference)
        if payout is None or payout.status != Outcome.PENDING or payout.approval != APPROVED:
            return
        if await calls.recorded(session, calls.Subject(_FLOW.kind, reference), Action.DISBURSE):
            return
        finish = partial(self._finish, session, runtime, payout)
        await _FLOW.send_debited(session, runtime, payout, finish)

    async def check_status(self, session: AsyncSession, runtime: Runtime, reference: str) -> None:
        """Asks the operator again about a pending payout (a delayed outcome)."""
        payout = await _FLOW.lock(session, reference)
        if payout is None or payout.status != Outcome.PENDING or not payout.debited:
            return
        await _FLOW.recheck(
            session, runtime, payout, partial(self._finish, session, runtime, payout)
        )

    async def force_outcome(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        reference: str,
        outcome: Outcome,
    ) -> Payout:
        """Test helper: decides a pending test payout now."""
        found = await self.get(session, caller, reference)
        payout = await _FLOW.lock(session, found.reference)
        if payout is None or payout.status != Outcome.PENDING:
            raise Conflict(f"Le transfert est déjà {status_word(found.status)}.")
        await self._finish(session, runtime, payout, outcome, "test_helper")
        return payout


payouts = PayoutService()


async def _apply_answer(
    session: AsyncSession, runtime: Runtime, reference: str, result: OperatorResult
) -> None:
    """An operator's answer about a payout's transfer, applied if it still waits."""
    payout = await _FLOW.lock(session, reference)
    if payout is not None and payout.status == Outcome.PENDING and payout.debited:
        await _FLOW.apply(
            session, runtime, payout, result, partial(payouts._finish, session, runtime, payout)
        )


# Wired by the composition root (cauri.wiring): the call protocol imports no domain.
SUBJECT = calls.SubjectKind("payout", _apply_answer, _FLOW.waiting)
