"""What Cauri asks of an operator (Mobile Money or card acquirer), whatever its network."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    PENDING = "pending"


@dataclass(frozen=True)
class OperatorResult:
    outcome: Outcome
    # When pending: ask for the status again after this many seconds; None means the answer
    # comes another way (the customer's action on a page, an operator callback) or never.
    check_after: float | None = None
    operator_reference: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Collection:
    """Money to take from a customer."""

    reference: str
    operator: str
    amount: int
    currency: str
    phone_number: str | None
    otp: str | None


@dataclass(frozen=True)
class Disbursement:
    """Money to send to a beneficiary: a payout or a refund."""

    reference: str
    operator: str
    amount: int
    currency: str
    phone_number: str
    # The payer's wording for the beneficiary (spec: POST /payouts `reason`).
    reason: str | None = None


@dataclass(frozen=True)
class CallbackUpdate:
    """What an operator's own notification says about one of our collections."""

    reference: str  # the Collection's reference: the payment's
    result: OperatorResult


class OperatorAdapter(Protocol):
    # True when `collect` engages no one and decides from the collection alone (the
    # simulator): asking before the payment is recorded is then the same as asking after.
    decides_offline: bool

    async def collect(self, collection: Collection) -> OperatorResult: ...

    async def collection_status(self, collection: Collection) -> OperatorResult: ...

    async def disburse(self, disbursement: Disbursement) -> OperatorResult: ...

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult: ...

    async def parse_callback(
        self, headers: Mapping[str, str], body: bytes
    ) -> CallbackUpdate | None:
        """Verifies and reads a notification the operator sent us; None when it is not
        authentic or not about a collection."""
        ...
