"""Every job kind of the service and the handler that runs it: the worker's table, built at
the composition root so that the worker itself imports no domain."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cauri import wiring
from cauri.calls.tasks import JOBS as CALL_JOBS
from cauri.checkout.tasks import JOBS as CHECKOUT_JOBS
from cauri.history import tasks as history
from cauri.payments.tasks import JOBS as PAYMENT_JOBS
from cauri.payout_batches.tasks import JOBS as PAYOUT_BATCH_JOBS
from cauri.payouts.tasks import JOBS as PAYOUT_JOBS
from cauri.plans.tasks import JOBS as PLAN_JOBS
from cauri.reconciliation import tasks as reconciliation
from cauri.refunds.tasks import JOBS as REFUND_JOBS
from cauri.runtime import Runtime
from cauri.webhooks.tasks import JOBS as WEBHOOK_JOBS
from cauri.worker.jobs import Handler, Job

ALL: tuple[Job[Any], ...] = (
    *CALL_JOBS,
    *CHECKOUT_JOBS,
    *history.JOBS,
    *PAYMENT_JOBS,
    *PAYOUT_JOBS,
    *PAYOUT_BATCH_JOBS,
    *PLAN_JOBS,
    *reconciliation.JOBS,
    *REFUND_JOBS,
    *WEBHOOK_JOBS,
)


def handlers(extra: Iterable[Job[Any]] = ()) -> Mapping[str, Handler]:
    """By kind name; `extra` adds kinds (tests run slow ones in a real worker process)."""
    wiring.wire()  # the jobs settle rows through the call protocol
    every = (*ALL, *extra)
    table = {job.kind.name: job.run for job in every}
    assert len(table) == len(every), "a job kind is declared twice"
    return table


async def started(runtime: Runtime) -> None:
    """What a worker does as it starts: the jobs that run on a schedule of their own (the
    daily reconciliation, the history's months ahead) are queued if none is."""
    await reconciliation.keep_scheduled(runtime)
    await history.keep_scheduled(runtime)
