"""A scripted operator network for the call protocol's tests (the only thing faked: an
operator's network; the MTN connector's own tests run over HTTP against its contract fake).

Each answer is scripted per phone number, for the send and for each status query in turn;
every request is recorded with the reference it was sent under."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import text

from cauri.operators.protocol import (
    CallbackUpdate,
    CheckReport,
    Collection,
    Disbursement,
    Exchange,
    Notice,
    OperatorResult,
    Outcome,
    RefundSupport,
)
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.support import scalar

PENDING = OperatorResult(Outcome.PENDING)
UNKNOWN = OperatorResult(Outcome.PENDING, unknown=True)
NOT_FOUND = OperatorResult(Outcome.PENDING, unknown_reference=True)
SUCCEEDED = OperatorResult(Outcome.SUCCEEDED, operator_reference="fin-1")
FAILED = OperatorResult(Outcome.FAILED, reason="payer_not_found")


@dataclass
class Sent:
    kind: str  # collect | disburse | refund | collect_status | …
    reference: str
    phone_number: str | None


@dataclass
class ScriptedNetwork:
    """Answers `send[number]` to a request, then `statuses[number]` in turn to its status
    queries (the last one repeats); PENDING by default."""

    send: dict[str, OperatorResult] = field(default_factory=dict)
    statuses: dict[str, list[OperatorResult]] = field(default_factory=lambda: defaultdict(list))
    seen: list[Sent] = field(default_factory=list)
    decides_offline = False
    refunds = RefundSupport.PARTIAL
    # Requests to these numbers are held in flight until the test sets the event.
    gates: dict[str, asyncio.Event] = field(default_factory=dict)
    asked: asyncio.Event = field(default_factory=asyncio.Event)  # set by the first request

    async def _answer(self, kind: str, reference: str, number: str | None) -> OperatorResult:
        self.seen.append(Sent(kind, reference, number))
        self.asked.set()
        if number in self.gates:
            await self.gates[number].wait()
        if kind.endswith("_status"):
            script = self.statuses.get(number or "", [])
            asked = sum(1 for s in self.seen if s.kind == kind and s.reference == reference)
            result = script[min(asked, len(script)) - 1] if script else PENDING
        else:
            result = self.send.get(number or "", PENDING)
        exchange = Exchange(kind, "POST", f"https://operator.test/{kind}", None, 202, None, 3)
        return OperatorResult(
            result.outcome,
            operator_reference=result.operator_reference,
            reason=result.reason,
            unknown=result.unknown,
            unknown_reference=result.unknown_reference,
            exchanges=(exchange,),
        )

    def sends(self, kind: str | None = None) -> list[Sent]:
        return [s for s in self.seen if not s.kind.endswith("_status") and kind in (None, s.kind)]

    async def collect(self, collection: Collection) -> OperatorResult:
        return await self._answer("collect", collection.reference, collection.phone_number)

    async def collection_status(self, collection: Collection) -> OperatorResult:
        return await self._answer("collect_status", collection.reference, collection.phone_number)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        return await self._answer("disburse", disbursement.reference, disbursement.phone_number)

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        return await self._answer(
            "disburse_status", disbursement.reference, disbursement.phone_number
        )

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        return await self._answer("refund", disbursement.reference, disbursement.phone_number)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        return await self._answer(
            "refund_status", disbursement.reference, disbursement.phone_number
        )

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """Unsigned, like MTN's: `{"reference": …, "status": "SUCCESSFUL"|"FAILED"}`."""
        try:
            fields = json.loads(notice.body)
        except ValueError:
            return None
        outcome = Outcome.SUCCEEDED if fields.get("status") == "SUCCESSFUL" else Outcome.FAILED
        return CallbackUpdate(fields["reference"], OperatorResult(outcome), verified=False)

    async def check(self) -> CheckReport:
        return CheckReport(ok=True, detail="scripted")

    async def aclose(self) -> None:
        pass


async def poll_after(runtime: Runtime, worker: Worker, seconds: float) -> int:
    """Moves the clock and runs what fell due (status queries among them)."""
    runtime.clock.advance(seconds)  # type: ignore[attr-defined]
    return await worker.drain()


async def operation_of(runtime: Runtime, subject_ref: str) -> dict[str, object]:
    async with runtime.sessionmaker() as session:
        row = (
            (
                await session.execute(
                    text("SELECT * FROM operator_operations WHERE subject_ref = :ref"),
                    {"ref": subject_ref},
                )
            )
            .mappings()
            .one()
        )
    return dict(row)


async def exchanges_of(runtime: Runtime, subject_ref: str) -> list[str]:
    async with runtime.sessionmaker() as session:
        rows = await session.scalars(
            text(
                "SELECT e.action FROM operator_exchanges e JOIN operator_operations o "
                "ON o.id = e.operation_id WHERE o.subject_ref = :ref ORDER BY e.id"
            ),
            {"ref": subject_ref},
        )
        return list(rows)


async def polls_queued(runtime: Runtime) -> int:
    return int(await scalar(runtime, "SELECT count(*) FROM jobs WHERE kind = 'calls.poll'"))
