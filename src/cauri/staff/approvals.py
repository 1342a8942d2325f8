"""Maker-checker for every live money action above the platform's
`payout_dual_approval_above` in its currency: a balance's credit, a failed plan's
resolution (its escrow refunded to a number or released to the merchant), and the
loosening of that amount itself (raised or unset). Test mode is never held; with the amount
unset, one person acts, as always.

Such an action is not done when asked: it is recorded here as pending with its arguments,
and done, as it was asked, when a second person approves it (cauri.staff.actions). Who may
be that second person is the rule set payouts use too (cauri.audit.approvers). Payouts keep
their own approvals (cauri.payouts.service): a payout is already a row that waits.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import approvers
from cauri.audit.actor import Actor
from cauri.kit.errors import Conflict, NotFound
from cauri.kit.ids import parse_uuid
from cauri.models import MoneyApproval, PlatformSettings
from cauri.models.approvals import APPROVED, PENDING, REJECTED
from cauri.platform.service import fixed_column

SETTING = "payout_dual_approval_above"


async def dual_above(session: AsyncSession, currency: str) -> int | None:
    """The platform's amount in `currency` (minor units) above which two people act."""
    column = PlatformSettings.__table__.c[fixed_column(SETTING, currency)]
    found: int | None = await session.scalar(select(column).where(PlatformSettings.id == 1))
    return found


async def needs_two(session: AsyncSession, *, livemode: bool, amount: int, currency: str) -> bool:
    if not livemode:
        return False
    above = await dual_above(session, currency)
    return above is not None and amount > above


def loosens(current: int | None, wanted: int | None) -> bool:
    """Whether changing the amount from `current` to `wanted` lets one person do more: a
    raise, or an unset of an amount that was set. Setting it where unset, or lowering it,
    tightens the rule and takes effect at once."""
    if current is None:
        return False
    return wanted is None or wanted > current


async def ask(
    session: AsyncSession,
    actor: Actor,
    now: datetime,
    *,
    kind: str,
    subject: str,
    amount: int | None,
    currency: str,
    livemode: bool,
    params: Mapping[str, Any],
    reason: str | None,
) -> MoneyApproval:
    """Records the action as pending: the asker's is its first approval."""
    approvers.named(actor)
    pending = MoneyApproval(
        id=uuid.uuid4(),
        kind=kind,
        subject=subject,
        amount=amount,
        currency=currency,
        livemode=livemode,
        params=dict(params),
        reason=reason,
        status=PENDING,
        requested_by=actor.key,
        requested_by_name=actor.name,
        requested_staff_account_id=actor.staff_account_id,
        requested_at=now,
        decided_by=None,
        decided_by_name=None,
        decided_staff_account_id=None,
        decided_at=None,
    )
    session.add(pending)
    await session.flush()
    return pending


def asker(pending: MoneyApproval) -> Actor:
    return Actor.recorded(pending.requested_by_name, pending.requested_staff_account_id)


async def lock_pending(session: AsyncSession, approval_id: str) -> MoneyApproval:
    """The pending action, locked: two decisions at once are taken one after the other, and
    the second finds it decided."""
    key = parse_uuid(approval_id)
    found = (
        None
        if key is None
        else await session.scalar(
            select(MoneyApproval).where(MoneyApproval.id == key).with_for_update()
        )
    )
    if found is None:
        raise NotFound("Demande d'approbation introuvable.")
    if found.status != PENDING:
        word = "approuvée" if found.status == APPROVED else "rejetée"
        raise Conflict(f"Cette demande est déjà {word}.")
    return found


async def decide(
    session: AsyncSession, pending: MoneyApproval, actor: Actor, now: datetime, *, approve: bool
) -> None:
    """The second person's decision. An approval follows cauri.audit.approvers; a
    rejection may come from anyone allowed to approve, the asker included (a withdrawal)."""
    if approve:
        await approvers.check_second(session, asker(pending), actor, now)
    pending.status = APPROVED if approve else REJECTED
    pending.decided_by = actor.key
    pending.decided_by_name = actor.name
    pending.decided_staff_account_id = actor.staff_account_id
    pending.decided_at = now
    await session.flush()


async def kind_of(session: AsyncSession, approval_id: str) -> str | None:
    """The action an approval is for (whoever decides needs its permission)."""
    key = parse_uuid(approval_id)
    if key is None:
        return None
    found: str | None = await session.scalar(
        select(MoneyApproval.kind).where(MoneyApproval.id == key)
    )
    return found


async def waiting(session: AsyncSession, limit: int = 200) -> Sequence[MoneyApproval]:
    """The pending actions, oldest first."""
    statement = (
        select(MoneyApproval)
        .where(MoneyApproval.status == PENDING)
        .order_by(MoneyApproval.requested_at, MoneyApproval.id)
        .limit(limit)
    )
    return (await session.scalars(statement)).all()


def row(pending: MoneyApproval) -> dict[str, Any]:
    """What the audit log, the CLI and the console show of it."""
    return {
        "id": str(pending.id),
        "kind": pending.kind,
        "subject": pending.subject,
        "amount": pending.amount,
        "currency": pending.currency,
        "livemode": pending.livemode,
        "params": pending.params,
        "reason": pending.reason,
        "status": pending.status,
        "requested_by": pending.requested_by_name,
        "requested_at": pending.requested_at.isoformat(),
        "decided_by": pending.decided_by_name,
        "decided_at": pending.decided_at and pending.decided_at.isoformat(),
    }
