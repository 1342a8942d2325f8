"""Maker-checker inside a merchant's team, whatever the draft asks for (a payout:
cauri.team.drafts; a batch of payouts: cauri.team.batch_drafts): a draft awaits until a
second member who moves money approves it, or a member who moves money rejects it, or its
maker cancels it. The two people follow the platform's rules of two-person money actions
(cauri.audit.approvers): two different members, neither of whom invited the other or gave
them a sign-in link in the last 24 hours. Each decision is audited with the member as its
actor, as `<resource>.approve`, `.reject`, `.cancel`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import approvers
from cauri.audit.actor import Actor
from cauri.audit.log import audited
from cauri.kit.errors import Conflict, NotFound
from cauri.models import User
from cauri.models.payouts import TeamDraft
from cauri.runtime import Runtime
from cauri.team.roles import Permission, allows

AWAITING, APPROVED, REJECTED, CANCELLED = "awaiting", "approved", "rejected", "cancelled"
_ACTIONS = {APPROVED: "approve", REJECTED: "reject", CANCELLED: "cancel"}

D = TypeVar("D", bound=TeamDraft)


@dataclass(frozen=True)
class DraftKind(Generic[D]):
    """One kind of draft: its table, its resource type in the audit log, how the log shows
    it, and what an unknown one is called."""

    model: type[D]
    resource: str
    row: Callable[[D], dict[str, Any]]
    missing: str

    async def awaiting_one(self, session: AsyncSession, merchant_id: str, reference: str) -> D:
        """The merchant's draft, locked (decisions on one draft are taken one at a time);
        another merchant's is as unknown as none."""
        draft = await session.get(self.model, reference, with_for_update=True)
        if draft is None or draft.merchant_id != merchant_id:
            raise NotFound(f"{self.missing} : {reference}.")
        if draft.status != AWAITING:
            raise Conflict(f"Le brouillon {reference} n'attend plus d'approbation.")
        return draft

    async def approvable(
        self,
        session: AsyncSession,
        runtime: Runtime,
        actor: Actor,
        merchant_id: str,
        reference: str,
    ) -> D:
        """The draft, locked, once `actor` may be its second member (not yet decided: what
        it asks for may still be refused)."""
        draft = await self.awaiting_one(session, merchant_id, reference)
        await _maker_still_moves_money(session, draft)
        maker = Actor.member(draft.created_by_email, draft.created_by)
        await approvers.check_second(session, maker, actor, runtime.clock.now())
        return draft

    async def decide(
        self, session: AsyncSession, runtime: Runtime, actor: Actor, draft: D, status: str
    ) -> D:
        """The draft's new state (`approved`, `rejected`, `cancelled`), audited."""

        async def state() -> dict[str, Any]:
            return self.row(draft)

        async def change() -> D:
            draft.status = status
            draft.decided_by = actor.staff_account_id
            draft.decided_by_email = actor.name
            draft.decided_at = runtime.clock.now()
            return draft

        action = f"{self.resource}.{_ACTIONS[status]}"
        resource = (self.resource, draft.reference)
        return await audited(
            session, actor, action, resource, state, change, at=runtime.clock.now()
        )

    async def reject(
        self,
        session: AsyncSession,
        runtime: Runtime,
        actor: Actor,
        merchant_id: str,
        reference: str,
    ) -> D:
        """Refused by a member who moves money: it is never made."""
        draft = await self.awaiting_one(session, merchant_id, reference)
        return await self.decide(session, runtime, actor, draft, REJECTED)

    async def cancel(
        self,
        session: AsyncSession,
        runtime: Runtime,
        actor: Actor,
        merchant_id: str,
        reference: str,
    ) -> D:
        """Withdrawn by the member who asked for it (nobody else)."""
        draft = await self.awaiting_one(session, merchant_id, reference)
        if draft.created_by != actor.staff_account_id:
            raise Conflict("Seul le membre qui a fait cette demande peut l'annuler.")
        return await self.decide(session, runtime, actor, draft, CANCELLED)

    async def awaiting(self, session: AsyncSession, merchant_id: str) -> Sequence[D]:
        """The merchant's drafts awaiting a second approval, oldest first."""
        statement = (
            select(self.model)
            .where(self.model.merchant_id == merchant_id, self.model.status == AWAITING)
            .order_by(self.model.created_at, self.model.reference)
        )
        return (await session.scalars(statement)).all()

    async def count_awaiting(self, session: AsyncSession, merchant_id: str) -> int:
        statement = select(func.count()).where(
            self.model.merchant_id == merchant_id, self.model.status == AWAITING
        )
        return int(await session.scalar(statement) or 0)


async def _maker_still_moves_money(session: AsyncSession, draft: TeamDraft) -> None:
    """A draft is its maker's request: once they are disabled or no longer move money, it
    is nobody's, and only a rejection ends it."""
    maker = await session.get(User, draft.created_by)
    if (
        maker is None
        or maker.disabled_at is not None
        or not allows(maker.role, Permission.MOVE_MONEY)
    ):
        raise Conflict(
            f"{draft.created_by_email} ne peut plus demander de transfert : ce brouillon ne "
            "peut qu'être rejeté."
        )
