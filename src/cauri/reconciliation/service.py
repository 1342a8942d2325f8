"""Finance's queue of discrepancies: read, and resolved by a person with a reason, audited;
where money must move, with a correcting entry of the connector account's wallet
(cauri.ledger.movements.Correction), which two people approve above the platform's
dual-approval amount (cauri.staff.actions.resolve_discrepancy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import log
from cauri.audit.actor import Actor
from cauri.kit.errors import CauriError, Conflict, InvalidRequest, NotFound
from cauri.kit.money import decimal_text, to_minor
from cauri.ledger import movements
from cauri.ledger.movements import Counterpart, Part
from cauri.models import LedgerPosting, LedgerTransaction, Merchant, OperatorOperation
from cauri.models.statements import Discrepancy, StatementLine
from cauri.operators import catalogue
from cauri.reconciliation import matching, suggestions
from cauri.reconciliation.kinds import LABELS
from cauri.reconciliation.wallets import LIVE

RESOURCE = "discrepancy"


@dataclass(frozen=True)
class Filters:
    connector: str | None = None
    day: date | None = None
    kind: str | None = None
    open_only: bool = True


async def listed(
    session: AsyncSession, filters: Filters, limit: int = 100
) -> Sequence[Discrepancy]:
    """Oldest day first, as finance works through them."""
    query = select(Discrepancy).order_by(Discrepancy.day, Discrepancy.id).limit(limit)
    if filters.connector is not None:
        query = query.where(Discrepancy.connector == filters.connector)
    if filters.day is not None:
        query = query.where(Discrepancy.day == filters.day)
    if filters.kind is not None:
        query = query.where(Discrepancy.kind == filters.kind)
    if filters.open_only:
        query = query.where(Discrepancy.resolved_at.is_(None))
    return (await session.scalars(query)).all()


async def found(session: AsyncSession, discrepancy_id: int) -> Discrepancy:
    discrepancy = await session.get(Discrepancy, discrepancy_id)
    if discrepancy is None:
        raise NotFound(f"Aucun écart {discrepancy_id}.")
    return discrepancy


def summary(discrepancy: Discrepancy) -> dict[str, Any]:
    return {
        "id": discrepancy.id,
        "connector": discrepancy.connector,
        "day": discrepancy.day.isoformat(),
        "kind": discrepancy.kind,
        "label": LABELS.get(discrepancy.kind, discrepancy.kind),
        "currency": discrepancy.currency,
        "details": discrepancy.details,
        "operation": None if discrepancy.operation_id is None else str(discrepancy.operation_id),
        "found_at": discrepancy.found_at.isoformat(),
        "resolved_at": None
        if discrepancy.resolved_at is None
        else discrepancy.resolved_at.isoformat(),
        "resolved_by": discrepancy.resolved_by,
        "resolution": discrepancy.resolution,
    }


async def detail(session: AsyncSession, discrepancy_id: int) -> dict[str, Any]:
    """The discrepancy with both sides: the statement's line and Cauri's operation; while
    open, the correcting entry it most often calls for (`suggested`, as `--book` takes it)."""
    discrepancy = await found(session, discrepancy_id)
    shown = summary(discrepancy)
    line = (
        None
        if discrepancy.line_id is None
        else await session.get(StatementLine, discrepancy.line_id)
    )
    operation = (
        None
        if discrepancy.operation_id is None
        else await session.get(OperatorOperation, discrepancy.operation_id)
    )
    if line is not None:
        shown["line"] = {
            "statement": str(line.statement_id),
            "line": line.line,
            "operator_id": line.operator_id,
            "reference": line.reference,
            "kind": line.kind,
            "status": line.status,
            "amount": line.amount,
            "fee": line.fee,
            "currency": line.currency,
            "phone_number": line.phone_number,
            "at": line.at.isoformat(),
        }
    correction = (
        await session.execute(
            select(LedgerPosting.account, LedgerPosting.amount)
            .join(LedgerTransaction, LedgerTransaction.id == LedgerPosting.transaction_id)
            .where(
                LedgerTransaction.reference == f"discrepancy:{discrepancy.id}",
                LedgerTransaction.kind == str(movements.Movement.CORRECTED),
            )
            .order_by(LedgerPosting.id)
        )
    ).all()
    if correction:
        # Summed per account: a discrepancy reopened by a late line may have several.
        booked: dict[str, int] = {}
        for account, amount in correction:
            booked[account] = booked.get(account, 0) + amount
        shown["correction"] = booked
    if operation is not None:
        shown["cauri"] = {
            "action": operation.action,
            "subject": operation.subject,
            "subject_ref": operation.subject_ref,
            "status": operation.status,
            "operator_reference": operation.operator_reference,
            "amount": operation.request.get("amount"),
            "currency": operation.request.get("currency"),
            "created_at": operation.created_at.isoformat(),
        }
    if discrepancy.resolved_at is None:
        shown["suggested"] = await suggestions.suggested(session, discrepancy, line, operation)
    return shown


# Far above any real correction, and within a ledger amount (bigint) in any currency.
_AT_MOST = Decimal(10) ** 12


def part(written: str, currency: str) -> Part:
    """One part of a correcting entry as finance writes it: `COUNTERPART=AMOUNT`, the
    amount in major units, negative when taken from the counterpart (`merchant:ID=-9800`,
    `operator_costs=-150`, `suspense=2500`, `fees=-200`, `clearing:mtn=9800`)."""
    target, equals, amount = written.partition("=")
    kind, _, owner = target.strip().partition(":")
    try:
        counterpart = Counterpart(kind)
        major = Decimal(amount.strip())
        if not major.is_finite() or abs(major) >= _AT_MOST:
            raise ValueError(amount)
        minor = to_minor(major, currency, "book")
    except (ValueError, ArithmeticError, CauriError):
        raise InvalidRequest.field(
            "book",
            f"« {written} » : écrivez CIBLE=MONTANT, la cible parmi "
            f"{', '.join(c.value for c in Counterpart)}, le montant en {currency}.",
        ) from None
    needs_owner = counterpart in (Counterpart.MERCHANT, Counterpart.CLEARING)
    if not equals or needs_owner != bool(owner) or minor == 0:
        raise InvalidRequest.field(
            "book",
            f"« {written} » : merchant:ID et clearing:OPÉRATEUR nomment leur titulaire, les "
            "autres non ; le montant n'est pas nul.",
        )
    return Part(counterpart, minor, owner or None)


def moved(parts: Sequence[Part]) -> int:
    """How much a correction moves: what its entries credit in all (the wallet's side
    included), as the dual-approval amount is read."""
    entries = [p.amount for p in parts] + [-sum(p.amount for p in parts)]
    return sum(amount for amount in entries if amount > 0)


def parts_shown(parts: Sequence[Part], currency: str) -> list[str]:
    return [
        f"{p.counterpart.value}{'' if p.owner is None else ':' + p.owner}="
        f"{decimal_text(p.amount, currency)}"
        for p in parts
    ]


async def _check_owners(session: AsyncSession, parts: Sequence[Part]) -> None:
    for p in parts:
        if p.counterpart is Counterpart.MERCHANT and await session.get(Merchant, p.owner) is None:
            raise InvalidRequest.field("book", f"Aucun marchand {p.owner}.")
        if p.counterpart is Counterpart.CLEARING and catalogue.find(p.owner or "") is None:
            raise InvalidRequest.field("book", f"Aucun opérateur {p.owner} au catalogue.")


def _open(discrepancy: Discrepancy) -> Discrepancy:
    if discrepancy.resolved_at is not None:
        raise Conflict(f"L'écart {discrepancy.id} est déjà résolu ({discrepancy.resolution}).")
    return discrepancy


async def still_open(session: AsyncSession, discrepancy_id: int) -> Discrepancy:
    """The discrepancy, read as it stands, still open (resolving checks again, locked)."""
    return _open(await found(session, discrepancy_id))


async def _locked_open(session: AsyncSession, discrepancy_id: int) -> Discrepancy:
    discrepancy = (
        await session.scalars(
            select(Discrepancy).where(Discrepancy.id == discrepancy_id).with_for_update()
        )
    ).one_or_none()
    if discrepancy is None:
        raise NotFound(f"Aucun écart {discrepancy_id}.")
    return _open(discrepancy)


async def resolve(
    session: AsyncSession,
    actor: Actor,
    discrepancy_id: int,
    reason: str,
    now: datetime,
    parts: Sequence[Part] = (),
) -> Discrepancy:
    """Closed by a person with what they found, in the audit log; with `parts`, the
    correcting entry they book, in the same transaction (a merchant's debit its balance
    cannot cover is held as its receivable: cauri.ledger.movements.corrected)."""
    if not reason.strip():
        raise InvalidRequest.field("reason", "Indiquez ce qui résout l'écart.")
    # The connector's lock before the row's, in the order a run takes them.
    await matching.one_at_a_time(session, (await found(session, discrepancy_id)).connector)
    discrepancy = await _locked_open(session, discrepancy_id)
    await _check_owners(session, parts)
    before = summary(discrepancy)
    after = summary(discrepancy)
    if parts:
        if discrepancy.currency is None:
            raise InvalidRequest.field("book", "Cet écart n'a pas de devise : rien à écrire.")
        posted = await movements.corrected(
            session,
            movements.Correction(
                connector=discrepancy.connector,
                livemode=LIVE,
                currency=discrepancy.currency,
                parts=tuple(parts),
                reference=f"discrepancy:{discrepancy.id}",
            ),
            now,
        )
        after["correction"] = {entry.account.code: entry.amount for entry in posted}
    discrepancy.resolved_at = now
    discrepancy.resolved_by = actor.name
    discrepancy.resolution = reason.strip()
    await log.record(
        session,
        actor,
        "discrepancy.resolved",
        RESOURCE,
        str(discrepancy.id),
        before,
        after | summary(discrepancy),
        reason,
        at=now,
    )
    return discrepancy
