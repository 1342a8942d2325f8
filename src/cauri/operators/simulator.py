"""Test mode's operator: no network, the outcome is read off the last four digits.

DESIGN, Test mode: 0000 succeeded at once · 0001 refused at initiation · 0002 stays pending ·
0003 pending, then failed · anything else pending, then succeeded after the settle delay.
Card collections stay pending until the tester decides on the hosted page.
"""

from __future__ import annotations

from cauri.operators.protocol import (
    CallbackUpdate,
    CheckReport,
    Collection,
    Disbursement,
    Notice,
    OperatorResult,
    Outcome,
    RefundSupport,
)


class Simulator:
    decides_offline = True
    # Test mode moves no money: every operator refunds any part, as live MTN and pawaPay do.
    refunds = RefundSupport.PARTIAL

    def __init__(self, settle_delay: float) -> None:
        self.settle_delay = settle_delay

    def _initiate(self, number: str) -> OperatorResult:
        match number[-4:]:
            case "0000":
                return OperatorResult(Outcome.SUCCEEDED)
            case "0001":
                return OperatorResult(Outcome.FAILED, reason="refused_at_initiation")
            case "0002":
                return OperatorResult(Outcome.PENDING)
            case _:
                return OperatorResult(Outcome.PENDING, check_after=self.settle_delay)

    @staticmethod
    def _settle(number: str) -> OperatorResult:
        match number[-4:]:
            case "0002":
                return OperatorResult(Outcome.PENDING)
            case "0003":
                return OperatorResult(Outcome.FAILED, reason="refused_after_initiation")
            case _:
                return OperatorResult(Outcome.SUCCEEDED)

    async def collect(self, collection: Collection) -> OperatorResult:
        if collection.phone_number is None:
            return OperatorResult(Outcome.PENDING)
        return self._initiate(collection.phone_number)

    async def collection_status(self, collection: Collection) -> OperatorResult:
        if collection.phone_number is None:
            return OperatorResult(Outcome.PENDING)
        return self._settle(collection.phone_number)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        return self._initiate(disbursement.phone_number)

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        return self._settle(disbursement.phone_number)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        return self._initiate(disbursement.phone_number)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        return self._settle(disbursement.phone_number)

    async def check(self) -> CheckReport:
        return CheckReport(ok=True, detail="Simulateur du mode test : aucun réseau.")

    async def aclose(self) -> None:
        pass

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        # Test mode contacts no operator, so no operator ever calls back.
        return None
