"""The chaos campaign converges only once nothing is left to make (tools/chaos_campaign):
CI's campaign found a Wave refund "stuck untold" that a late instalment's refund job wrote
just after the campaign had seen everything settle and before its verdict read."""

from __future__ import annotations

from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from tools.chaos_campaign.__main__ import _converge

_QUEUED = text(
    "INSERT INTO jobs (kind, lane, payload, status, run_at, created_at) "
    "VALUES ('plans.refund_late_instalment', 'default', '{}', 'queued', now(), now())"
)


async def test_a_refund_job_due_is_not_convergence(runtime: Runtime) -> None:
    assert await _converge(runtime, [], within=5) is not None
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(_QUEUED)
    assert await _converge(runtime, [], within=0.6) is None
