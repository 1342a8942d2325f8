"""Jobs of the plans domain: the expiry due at expires_at, the refund of a cancellation (its
start, then its delayed outcome), and the refund of an instalment that succeeded late.

The last one lives here, not in the settlement that enqueues it: the refunds domain it calls
imports payments, which imports the settlement."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.plans import settlement
from cauri.plans.service import EXPIRE_JOB, plans
from cauri.refunds.service import refunds
from cauri.runtime import Runtime


async def expire(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await plans.expire(session, runtime, uuid.UUID(payload["plan_id"]))


async def start_refund(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await settlement.start_refund(session, runtime, uuid.UUID(payload["plan_id"]))


async def check_refund(session: AsyncSession, runtime: Runtime, payload: dict[str, Any]) -> None:
    await settlement.check_refund(session, runtime, uuid.UUID(payload["plan_id"]))


async def refund_late_instalment(
    session: AsyncSession, runtime: Runtime, payload: dict[str, Any]
) -> None:
    await refunds.refund_late_instalment(session, runtime, uuid.UUID(payload["payment_id"]))


HANDLERS = {
    EXPIRE_JOB: expire,
    settlement.REFUND_JOB: start_refund,
    settlement.REFUND_STATUS_JOB: check_refund,
    settlement.REFUND_LATE_JOB: refund_late_instalment,
}
