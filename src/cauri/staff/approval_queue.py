"""The payouts held for approval, as the finance staff work through them: oldest first, each
with the approvals it has so far and how many it needs (two above the platform's
`payout_dual_approval_above`, cauri.payouts.service). Read-only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.kit.pagination import Page, paginate
from cauri.models import Payout, PayoutApproval
from cauri.models.payouts import APPROVAL_REQUIRED
from cauri.payouts.service import payouts


@dataclass(frozen=True)
class Held:
    payout: Payout
    approvals: Sequence[PayoutApproval]  # in the order given
    needed: int

    def approved_by(self, key: str) -> bool:
        """Whether the person (cauri.audit.Actor.key) has already approved it."""
        return any(approval.approver == key for approval in self.approvals)


async def held(session: AsyncSession, page: Page) -> tuple[list[Held], int]:
    """One page of the payouts awaiting approval, and how many there are in all."""
    waiting = (Payout.approval == APPROVAL_REQUIRED, Payout.status == "pending")
    order = (Payout.created_at.asc(), Payout.reference.asc())
    found, total = await paginate(session, Payout, waiting, order, page)
    given: dict[str, list[PayoutApproval]] = defaultdict(list)
    for approval in await payouts.approvals_of(session, [p.reference for p in found]):
        given[approval.payout_reference].append(approval)
    rows = [
        Held(payout, given[payout.reference], await payouts.approvals_needed(session, payout))
        for payout in found
    ]
    return rows, total


async def one(session: AsyncSession, reference: str) -> Held | None:
    """The payout of that reference with its approvals, whatever its state now; None if
    there is none."""
    payout = await session.get(Payout, reference)
    if payout is None:
        return None
    approvals = await payouts.approvals(session, reference)
    return Held(payout, approvals, await payouts.approvals_needed(session, payout))
