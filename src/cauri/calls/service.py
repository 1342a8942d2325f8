"""The operator call protocol: record → commit → call → apply (DESIGN, live money).

A request to an operator's network is first recorded as an operation (its id is the
idempotency reference the operator is sent), with the first status query already queued,
and committed; then it is sent with no transaction open and no row locked; its answer is
recorded (every exchange, secrets already removed by the adapter) and applied in a new
transaction. A final status is set once: whichever of the call, a status query or a
verified callback gets there first settles the operation and hands the outcome to its
subject's domain (`wire`); the others change nothing.

An answer that says nothing (timeout, reset, 5xx, 429) leaves the operation pending: status
queries follow on a schedule (CAURI_OPERATOR_POLL_DELAYS, then every
operator_poll_interval), and once operator_poll_horizon has passed it is flagged for a
person, never failed by guess. A status query that finds the operator never heard of the
request sends it again under the same reference, which the operator deduplicates.

An offline adapter (the test-mode simulator) decides without a network: it is asked inside
the caller's transaction and leaves no operation behind.
"""

from __future__ import annotations

import hmac
import json
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import structlog
from sqlalchemy import Row, func, literal, select, text, update
from sqlalchemy.dialects.postgresql import JSONB, insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import jobs, requests, schedule
from cauri.calls.requests import Action, Request
from cauri.connectors.registry import ADAPTER_PREFIX, Routed
from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict, NotFound, Unauthorized
from cauri.kit.ids import parse_uuid
from cauri.kit.money import EXPONENT
from cauri.kit.wording import status_word
from cauri.ledger import movements
from cauri.models import OperatorExchange, OperatorOperation
from cauri.operators.exchange import MAX_RECORDED
from cauri.operators.protocol import (
    NOTIFICATION_TOKEN,
    CallbackUpdate,
    Exchange,
    Notice,
    OperatorResult,
    Outcome,
    ResendsNotifications,
)
from cauri.runtime import Runtime

log = structlog.get_logger("cauri.calls")


class UnknownCallback(NotFound):
    """About no request of this connector: answered 404, and kept on record."""

    keeps_writes = True


class UnreadableCallback(Unauthorized):
    """Not authentic or not readable: answered 401, and kept on record."""

    keeps_writes = True


# What a subject's domain does with a settled or still pending answer about it: locks its
# row and applies the answer if the row still waits for one.
Apply = Callable[[AsyncSession, Runtime, str, OperatorResult], Awaitable[None]]
# Whether a subject's row still waits for an operator's answer. A request the operator never
# got is sent again only for a row that waits: money is never sent for a row already ended.
Waiting = Callable[[AsyncSession, str], Awaitable[bool]]


@dataclass(frozen=True)
class Subject:
    kind: str  # payment | payout | refund | plan_refund
    reference: str


@dataclass(frozen=True)
class SubjectKind:
    """How a domain takes an operator's answer about one of its rows (`apply`), and how to
    tell that the row still waits for one (`waiting`)."""

    kind: str
    apply: Apply
    waiting: Waiting


_KINDS: dict[str, SubjectKind] = {}


def wire(kinds: Iterable[SubjectKind]) -> None:
    """The domains whose rows operators answer about: wired once at start-up by the
    composition root (cauri.wiring), since this protocol imports no domain."""
    _KINDS.update((kind.kind, kind) for kind in kinds)


def _kind(name: str) -> SubjectKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise RuntimeError(f"no domain wired for {name!r}: cauri.wiring.wire() first") from None


async def recorded(session: AsyncSession, subject: Subject, action: Action) -> bool:
    """Whether an operation was recorded for this subject and action: its request may have
    reached the operator, so only that operation's answer (or a person's settlement) may
    end the subject (DESIGN, live money)."""
    found = await session.scalar(
        select(OperatorOperation.id).where(
            OperatorOperation.subject == subject.kind,
            OperatorOperation.subject_ref == subject.reference,
            OperatorOperation.action == action.value,
        )
    )
    return found is not None


def callback_url(runtime: Runtime, connector: str, reference: str) -> str | None:
    """Where the operator notifies us about one request: only behind a public URL."""
    base = runtime.settings.public_url
    if base is None:
        return None
    return f"{base.rstrip('/')}/api/v1/operator-callbacks/{connector}/{reference}"


async def engage(
    session: AsyncSession,
    runtime: Runtime,
    routed: Routed,
    subject: Subject,
    action: Action,
    request: Request,
) -> OperatorResult:
    """Sends `request` through `routed` and applies the answer to `subject`.

    Offline: asked now, in the caller's transaction, and applied there. Network: the
    caller's writes so far are committed with the operation (record → commit), the request
    is sent outside any transaction (call), and the answer is applied in a new one (apply).
    An operation already recorded for this subject and action (a job run twice) is not sent
    again: its status queries settle it. The caller re-reads its row afterwards.
    """
    if routed.adapter.decides_offline:
        result = await requests.send(routed.adapter, action, request)
        await _kind(subject.kind).apply(session, runtime, subject.reference, result)
        return result
    operation_id = await _record(session, runtime, routed, subject, action, request)
    if operation_id is None:
        return OperatorResult(Outcome.PENDING)
    await session.commit()
    result = await requests.send(routed.adapter, action, request)
    await _exchanges(session, runtime, routed.connector, operation_id, result.exchanges)
    await session.execute(
        update(OperatorOperation).where(OperatorOperation.id == operation_id).values(sent=True)
    )
    await _settle(session, runtime, operation_id, result)
    return result


async def _record(
    session: AsyncSession,
    runtime: Runtime,
    routed: Routed,
    subject: Subject,
    action: Action,
    request: Request,
) -> uuid.UUID | None:
    now = runtime.clock.now()
    operation_id = uuid.UUID(request.reference)
    statement = (
        insert(OperatorOperation)
        .values(
            id=operation_id,
            # Only live mode has network adapters: test mode's simulator is offline.
            livemode=True,
            connector=routed.connector,
            operator=request.operator,
            action=action.value,
            subject=subject.kind,
            subject_ref=subject.reference,
            request=requests.encode(request),
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["subject", "subject_ref", "action"])
        .returning(OperatorOperation.id)
    )
    if (await session.scalars(statement)).one_or_none() is None:
        return None
    await _queue_poll(session, runtime, operation_id, polls_done=0, sent_at=now)
    return operation_id


async def _queue_poll(
    session: AsyncSession,
    runtime: Runtime,
    operation_id: uuid.UUID,
    *,
    polls_done: int,
    sent_at: datetime,
) -> bool:
    """Queues the next scheduled status query; False once the schedule has run out."""
    settings, now = runtime.settings, runtime.clock.now()
    due = schedule.next_poll(
        polls_done=polls_done,
        delays=settings.poll_delays,
        interval=settings.operator_poll_interval,
        horizon=settings.operator_poll_horizon,
        sent_at=sent_at,
        now=now,
    )
    if due is None:
        return False
    await jobs.POLL.enqueue(
        session,
        jobs.OperationJob(str(operation_id)),
        livemode=True,
        now=now,
        delay=(due - now).total_seconds(),
    )
    return True


async def _exchanges(
    session: AsyncSession,
    runtime: Runtime,
    connector: str,
    operation_id: uuid.UUID | None,
    exchanges: tuple[Exchange, ...],
) -> None:
    now = runtime.clock.now()
    session.add_all(
        OperatorExchange(
            operation_id=operation_id,
            connector=connector,
            action=exchange.action,
            method=exchange.method,
            url=exchange.url,
            request_body=exchange.request_body,
            response_status=exchange.response_status,
            response_body=exchange.response_body,
            duration_ms=exchange.duration_ms,
            error=exchange.error,
            created_at=now,
        )
        for exchange in exchanges
    )
    await session.flush()


async def _settle(
    session: AsyncSession, runtime: Runtime, operation_id: uuid.UUID, result: OperatorResult
) -> None:
    """Applies an answer about an operation: a final one once, whoever brings it; none that
    contradicts the recorded request (`_contradiction`)."""
    now = runtime.clock.now()
    if _tells_what(result) and await _contradicted(session, runtime, operation_id, result):
        return
    if result.outcome is Outcome.PENDING:
        if result.operator_reference is not None:
            await session.execute(
                update(OperatorOperation)
                .where(OperatorOperation.id == operation_id)
                .values(operator_reference=result.operator_reference, updated_at=now)
            )
        if result.operator_data:
            # Kept with the request: status queries and re-sends hand it back to the adapter.
            await session.execute(
                update(OperatorOperation)
                .where(OperatorOperation.id == operation_id)
                .values(
                    request=OperatorOperation.request.op("||")(
                        literal({"operator_data": dict(result.operator_data)}, JSONB)
                    )
                )
            )
        if result.redirect_url is not None:
            # Not final, but the customer needs the operator's page now: its subject (a
            # payment) takes the address.
            kind, reference = (
                await session.execute(
                    select(OperatorOperation.subject, OperatorOperation.subject_ref).where(
                        OperatorOperation.id == operation_id
                    )
                )
            ).one()
            await _kind(kind).apply(session, runtime, reference, result)
            await session.flush()
        return
    settled = (
        await session.execute(
            update(OperatorOperation)
            .where(OperatorOperation.id == operation_id, OperatorOperation.status == "pending")
            .values(
                status=result.outcome.value,
                reason=result.reason,
                operator_reference=text("coalesce(:reference, operator_reference)").bindparams(
                    reference=result.operator_reference
                ),
                settled_at=now,
                updated_at=now,
            )
            .returning(
                OperatorOperation.subject,
                OperatorOperation.subject_ref,
                OperatorOperation.action,
                OperatorOperation.connector,
                OperatorOperation.operator,
                OperatorOperation.livemode,
                OperatorOperation.request,
            )
        )
    ).one_or_none()
    if settled is None:
        return  # settled already, by another answer
    await _kind(settled.subject).apply(session, runtime, settled.subject_ref, result)
    if result.outcome is Outcome.SUCCEEDED:
        # The connector account's wallet moved, whatever its subject's domain made of it.
        await movements.carried(session, _carried(settled), now)


def _carried(settled: Row[Any]) -> movements.Carried:
    amount = int(settled.request["amount"])
    return movements.Carried(
        connector=settled.connector,
        operator=settled.operator,
        livemode=settled.livemode,
        currency=settled.request["currency"],
        into_wallet=amount if settled.action == Action.COLLECT else -amount,
        reference=settled.subject_ref,
    )


# The kinds of request an operator may report for each action: one that cannot refund the
# original transaction pays a refund out (pawaPay: a plan's cancellation refund).
_CARRIED_AS = {
    Action.COLLECT: frozenset({"collect"}),
    Action.DISBURSE: frozenset({"disburse"}),
    Action.REFUND: frozenset({"refund", "disburse"}),
}


def _tells_what(result: OperatorResult) -> bool:
    return (result.amount, result.currency, result.kind) != (None, None, None)


def _contradiction(action: Action, request: Request, result: OperatorResult) -> str | None:
    """What an operator's answer says of the request that the recorded request does not:
    its kind, currency or amount, where the answer gives them; None when all agree."""
    found = []
    if result.kind is not None and result.kind not in _CARRIED_AS[action]:
        found.append(f"kind {result.kind} (asked: {action.value})")
    if result.currency is not None and result.currency != request.currency:
        found.append(f"currency {result.currency} (asked: {request.currency})")
    asked = Decimal(request.amount).scaleb(-EXPONENT[request.currency])
    if result.amount is not None and result.amount != asked:
        found.append(f"amount {result.amount} (asked: {asked})")
    return "; ".join(found) or None


async def _contradicted(
    session: AsyncSession, runtime: Runtime, operation_id: uuid.UUID, result: OperatorResult
) -> bool:
    """Whether the answer contradicts the recorded request; if so the operation is flagged
    for a person, with both sides recorded (an exchange and its reason), and nothing of the
    answer is applied."""
    row = (
        await session.execute(
            select(
                OperatorOperation.connector, OperatorOperation.action, OperatorOperation.request
            ).where(OperatorOperation.id == operation_id, OperatorOperation.status == "pending")
        )
    ).one_or_none()
    if row is None:
        return False  # settled already: the answer changes nothing anyway
    connector, action = row[0], Action(row[1])
    request = requests.decode(action, row[2])
    found = _contradiction(action, request, result)
    if found is None:
        return False
    asked = {"kind": action.value, "amount": request.amount, "currency": request.currency}
    said = {
        "kind": result.kind,
        "amount": None if result.amount is None else str(result.amount),
        "currency": result.currency,
        "outcome": result.outcome.value,
    }
    note = Exchange(
        "mismatch",
        "-",
        "cauri: the answer against the request",
        json.dumps(asked),
        None,
        json.dumps(said),
        0,
        error=found,
    )
    await _exchanges(session, runtime, connector, operation_id, (note,))
    await session.execute(
        update(OperatorOperation)
        .where(OperatorOperation.id == operation_id, OperatorOperation.status == "pending")
        .values(reason=f"mismatch: {found}"[:500], updated_at=runtime.clock.now())
    )
    await _flag_for_review(session, runtime, operation_id)
    return True


async def poll(
    session: AsyncSession, runtime: Runtime, operation_id: uuid.UUID, *, scheduled: bool
) -> None:
    """A status query about a pending operation. A scheduled one queues the next (or flags
    the operation for review once the schedule has run out); one prompted by a callback
    only asks."""
    operation = await session.get(OperatorOperation, operation_id)
    if operation is None or operation.status != "pending":
        return
    routed = await runtime.operators.by_name(session, operation.connector)
    action = Action(operation.action)
    request = requests.decode(action, operation.request)
    subject = Subject(operation.subject, operation.subject_ref)
    polls_done, sent_at = operation.polls, operation.created_at
    await session.commit()  # nothing is held while the operator is asked
    if routed is None:
        # The connector account was removed or cannot be built (no CAURI_SECRET_KEY on this
        # process, …): the outcome is still owed, asked again later, and a person is told.
        log.warning("calls.connector_missing", operation_id=str(operation_id))
        result = OperatorResult(Outcome.PENDING, unknown=True)
        connector = operation.connector
        await _flag_for_review(session, runtime, operation_id)
    else:
        connector = routed.connector
        result = await requests.status(routed.adapter, action, request)
        if result.unknown_reference:
            if await _kind(subject.kind).waiting(session, subject.reference):
                # The operator never got it (we died before sending, or it was lost on the
                # way): the same request again, under the same reference.
                exchanges = result.exchanges
                result = await requests.send(routed.adapter, action, request)
                result = _with_exchanges(result, exchanges + result.exchanges)
            else:
                # Its row was ended by something other than this operation's answer: never
                # sent again; a person looks at it.
                await _flag_for_review(session, runtime, operation_id)
    await _exchanges(session, runtime, connector, operation_id, result.exchanges)
    await _settle(session, runtime, operation_id, result)
    if not scheduled or result.outcome is not Outcome.PENDING:
        return
    await session.execute(
        update(OperatorOperation)
        .where(OperatorOperation.id == operation_id)
        .values(polls=OperatorOperation.polls + 1, updated_at=runtime.clock.now())
    )
    if not await _queue_poll(
        session, runtime, operation_id, polls_done=polls_done + 1, sent_at=sent_at
    ):
        await _flag_for_review(session, runtime, operation_id)


def _with_exchanges(result: OperatorResult, exchanges: tuple[Exchange, ...]) -> OperatorResult:
    return replace(result, exchanges=exchanges)


async def _flag_for_review(
    session: AsyncSession, runtime: Runtime, operation_id: uuid.UUID
) -> None:
    await session.execute(
        update(OperatorOperation)
        .where(OperatorOperation.id == operation_id)
        .values(
            review_required_at=func.coalesce(
                OperatorOperation.review_required_at, runtime.clock.now()
            )
        )
    )
    log.warning("calls.review_required", operation_id=str(operation_id))


async def settle_by_hand(
    session: AsyncSession,
    runtime: Runtime,
    operation_id: uuid.UUID,
    outcome: Outcome,
    reason: str,
) -> None:
    """What a person learnt from the operator about a pending operation (`cauri exchanges
    settle`), applied as any answer is, once, and recorded with the exchanges."""
    operation = await session.get(OperatorOperation, operation_id)
    if operation is None:
        raise NotFound(f"Aucune opération {operation_id}.")
    if operation.status != "pending":
        raise Conflict(
            f"L'opération {operation_id} n'est plus en attente "
            f"(statut : {status_word(operation.status)})."
        )
    note = Exchange("manual_settlement", "CLI", "cauri exchanges settle", reason, None, None, 0)
    await _exchanges(session, runtime, operation.connector, operation.id, (note,))
    await _settle(session, runtime, operation.id, OperatorResult(outcome, reason=reason))


async def resend_notification(runtime: Runtime, operation_id: uuid.UUID) -> str:
    """Asks the operator to send its notification about a pending operation again (`cauri
    exchanges resend`); the notification then takes the way of any other. No transaction is
    held while the operator is asked; the exchange is recorded. Says what happened."""
    async with runtime.sessionmaker() as session:
        operation = await session.get(OperatorOperation, operation_id)
        if operation is None:
            raise NotFound(f"Aucune opération {operation_id}.")
        routed = await runtime.operators.by_name(session, operation.connector)
        action, stored = Action(operation.action), dict(operation.request)
    if operation.status != "pending":
        return f"already {operation.status}: nothing to ask"
    if routed is None or not isinstance(routed.adapter, ResendsNotifications):
        return f"{operation.connector} cannot be asked to notify again: its status queries decide"
    resent = await routed.adapter.resend_notification(action.value, requests.decode(action, stored))
    async with unit_of_work(runtime.sessionmaker) as session:
        await _exchanges(session, runtime, routed.connector, operation.id, (resent.exchange,))
    return resent.detail


# Characters kept of a refused notification's body (a forger's, mostly): enough to see what
# it was, not a store for whoever can reach the route.
REFUSED_KEPT = 2048
_UNREADABLE = "Notification d'opérateur non authentifiée ou illisible."


async def receive_callback(
    session: AsyncSession,
    runtime: Runtime,
    connector: str,
    reference: str | None,
    *,
    notice: Notice,
) -> None:
    """An operator's notification: verified first, with no transaction open (a connector
    may fetch the operator's keys), then recorded whatever it says (a refused one's body
    cut to REFUSED_KEPT characters). It never settles anything by itself: every connector
    offers a status query, and a notification, signed or not, only prompts one (at most one
    waits per operation), whose answer settles the operation if it matches the recorded
    request. So no forged, replayed or other account's notice can mark anything paid. A
    signed one that contradicts the recorded request (its amount, currency or kind) flags
    the operation for a person, both sides recorded. One about no pending operation of this
    connector (unknown, already settled, a duplicate) changes nothing."""
    routed = await _connector(session, runtime, connector)
    await session.commit()  # nothing is held while the notice is verified
    update_ = await routed.adapter.parse_callback(notice)
    named = reference or (update_.reference if update_ else None)
    operation = await _operation(session, routed.connector, named)
    refusal = _refusal(update_, operation)
    await _record_notice(session, runtime, routed.connector, operation, notice, refusal)
    if refusal is not None:
        raise refusal
    if update_ is None or operation is None or operation.status != "pending":
        return  # authentic, about nothing Cauri asked (acknowledged), or settled already
    # An unsigned notice could be anyone's: only a signed one's contradiction is a fact.
    signed = update_.verified and _tells_what(update_.result)
    if signed and await _contradicted(session, runtime, operation.id, update_.result):
        return
    await jobs.POLL.enqueue_once(
        session,
        jobs.OperationJob(str(operation.id), scheduled=False),
        livemode=True,
        now=runtime.clock.now(),
    )


async def _connector(session: AsyncSession, runtime: Runtime, connector: str) -> Routed:
    """The connector a notification is addressed to; an adapter registered in process is
    called back under its operator code. 404 for any other name, and for the simulator."""
    routed = await runtime.operators.by_name(session, connector) or await runtime.operators.by_name(
        session, ADAPTER_PREFIX + connector
    )
    if routed is None or routed.adapter.decides_offline:
        raise NotFound("Aucun opérateur configuré sous ce nom.")
    return routed


async def _operation(
    session: AsyncSession, connector: str, reference: str | None
) -> OperatorOperation | None:
    """The operation of `connector` a notification names, if any."""
    operation_id = parse_uuid(reference) if reference else None
    if operation_id is None:
        return None
    return (
        await session.scalars(
            select(OperatorOperation).where(
                OperatorOperation.id == operation_id, OperatorOperation.connector == connector
            )
        )
    ).one_or_none()


async def _record_notice(
    session: AsyncSession,
    runtime: Runtime,
    connector: str,
    operation: OperatorOperation | None,
    notice: Notice,
    refusal: Exception | None,
) -> None:
    """The notification on record, whatever it says; a refused one's body cut to
    REFUSED_KEPT characters."""
    body = notice.body.decode("utf-8", "replace")
    exchange = Exchange(
        action="callback",
        method=notice.method,
        url=urlsplit(notice.url).path[:REFUSED_KEPT],
        request_body=body[: REFUSED_KEPT if refusal else MAX_RECORDED],
        response_status=None,
        response_body=None,
        duration_ms=0,
    )
    await _exchanges(session, runtime, connector, operation.id if operation else None, (exchange,))


def _refusal(
    update_: CallbackUpdate | None, operation: OperatorOperation | None
) -> UnreadableCallback | UnknownCallback | None:
    """Why a notification is refused: not authentic (a signature or token that does not
    verify) or not readable, 401; about no request of this connector, 404."""
    if update_ is None:
        return UnreadableCallback(_UNREADABLE)
    if update_.verified and update_.reference is None:
        return None  # authentic, about nothing Cauri asked: acknowledged
    if update_.token is not None:
        given = (operation.request.get("operator_data") or {}) if operation else {}
        expected = given.get(NOTIFICATION_TOKEN)
        # Compared as bytes: a token of any characters is refused, never a 500.
        if expected is None or not hmac.compare_digest(
            update_.token.encode(), str(expected).encode()
        ):
            return UnreadableCallback(_UNREADABLE)
    if operation is None:
        return UnknownCallback("Aucune opération de cet opérateur sous cette référence.")
    return None
