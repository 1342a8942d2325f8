"""Finance's queue of discrepancies: read, and resolved by a person with a reason, audited."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import log
from cauri.audit.actor import Actor
from cauri.kit.errors import Conflict, InvalidRequest, NotFound
from cauri.models import OperatorOperation
from cauri.models.statements import Discrepancy, StatementLine
from cauri.reconciliation.kinds import LABELS

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
    """The discrepancy with both sides: the statement's line and Cauri's operation."""
    discrepancy = await found(session, discrepancy_id)
    shown = summary(discrepancy)
    if discrepancy.line_id is not None:
        line = await session.get(StatementLine, discrepancy.line_id)
        assert line is not None  # a foreign key
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
    if discrepancy.operation_id is not None:
        operation = await session.get(OperatorOperation, discrepancy.operation_id)
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
    return shown


async def resolve(
    session: AsyncSession, actor: Actor, discrepancy_id: int, reason: str, now: datetime
) -> Discrepancy:
    """Closed by a person with what they found, in the audit log. Money that must move
    moves by its own action (a balance's credit, an operation settled by hand), named in
    the reason."""
    if not reason.strip():
        raise InvalidRequest.field("reason", "Indiquez ce qui résout l'écart.")
    discrepancy = (
        await session.scalars(
            select(Discrepancy).where(Discrepancy.id == discrepancy_id).with_for_update()
        )
    ).one_or_none()
    if discrepancy is None:
        raise NotFound(f"Aucun écart {discrepancy_id}.")
    if discrepancy.resolved_at is not None:
        raise Conflict(f"L'écart {discrepancy_id} est déjà résolu ({discrepancy.resolution}).")
    before = summary(discrepancy)
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
        summary(discrepancy),
        reason,
        at=now,
    )
    return discrepancy
