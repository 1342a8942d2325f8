"""What Cauri asks of an operator (Mobile Money or card acquirer), whatever its network.

An adapter is either offline (the test-mode simulator: it decides from the request alone and
may be asked inside a database transaction) or a connector to an operator's network. A
connector never raises for what the network does: a timeout, a reset, a 5xx or a 429 is an
answer whose outcome is unknown (`unknown=True`, outcome pending), never a failure. Each
HTTP exchange it had is handed back with the answer (`exchanges`) for the call protocol to
record (cauri.calls).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    PENDING = "pending"


class RefundSupport(StrEnum):
    """What an operator's API can give back of a payment it collected (docs/OPERATORS.md)."""

    PARTIAL = "partial"  # any amount up to what was paid, in one refund or several
    WHOLE = "whole"  # only all of it, once: what the customer paid, commission included
    NONE = "none"  # no refund operation


@dataclass(frozen=True)
class Exchange:
    """One HTTP exchange with an operator, as it is recorded: with no secret in it (no
    Authorization or subscription key header, no token, no password)."""

    action: str  # what was asked: "requesttopay", "requesttopay_status", "token", …
    method: str
    url: str
    request_body: str | None
    response_status: int | None  # None: no response (timeout, connection reset)
    response_body: str | None
    duration_ms: int
    error: str | None = None


@dataclass(frozen=True)
class OperatorResult:
    outcome: Outcome
    # When pending: ask for the status again after this many seconds; None means the answer
    # comes another way (the customer's action on a page, an operator callback, the call
    # protocol's poll schedule) or never.
    check_after: float | None = None
    operator_reference: str | None = None
    reason: str | None = None
    # The operator did not say (timeout, reset, 5xx, 429): pending, to be asked again.
    unknown: bool = False
    # A status query answered that the operator does not know our reference: the request
    # never reached it, and may be sent again under the same reference.
    unknown_reference: bool = False
    exchanges: tuple[Exchange, ...] = ()
    # Where the customer approves the request, when the operator needs them on a page (Wave's
    # checkout launch URL, a provider's authorisation page): the payment's `payment_url`.
    redirect_url: str | None = None
    # What the operator gave for this request that later calls need (Orange's pay_token, and
    # the token its notifications carry): kept with the request, handed back with it.
    operator_data: Mapping[str, str] | None = None
    # What the operator's answer says the request was, where it says it (a status query's
    # or a notification's body): the amount in major units of `currency`, and the kind of
    # request (`collect`, `disburse` or `refund`, as the call protocol's actions). The call
    # protocol settles nothing on an answer that contradicts the recorded request.
    amount: Decimal | None = None
    currency: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class Collection:
    """Money to take from a customer."""

    # Our idempotency reference, sent to the operator (a UUID v4: MTN's X-Reference-Id).
    reference: str
    operator: str
    amount: int  # minor units of `currency`: what the customer is debited
    currency: str
    phone_number: str | None
    otp: str | None
    description: str | None = None
    # Where the operator should notify us about this request (None: no public URL known).
    callback_url: str | None = None
    # Where the customer goes back to after approving on the operator's page (the payment's
    # `return_url`).
    return_url: str | None = None
    # What the operator gave when the request was accepted (OperatorResult.operator_data).
    operator_data: Mapping[str, str] | None = None
    # The card holder (`firstname`, `lastname`, `email`) for an operator's card form.
    customer: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Disbursement:
    """Money to send to a beneficiary: a payout, a refund, a plan's cancellation refund."""

    reference: str  # our idempotency reference, as for a Collection
    operator: str
    amount: int  # minor units of `currency`: what the beneficiary receives
    currency: str
    phone_number: str
    # The payer's wording for the beneficiary (spec: POST /payouts `reason`).
    reason: str | None = None
    callback_url: str | None = None
    # For a refund of one payment: the reference its collection was sent to the operator
    # under (an operator with a refund operation refunds that transaction).
    refund_of: str | None = None
    operator_data: Mapping[str, str] | None = None  # as for a Collection


@dataclass(frozen=True)
class CallbackUpdate:
    """What an operator's own notification says about one of our requests."""

    # The reference the request was sent under; None for an authentic notification about
    # nothing Cauri asked (another event of the operator's): acknowledged, so that it is
    # not sent again, and otherwise ignored.
    reference: str | None
    result: OperatorResult
    # False for an operator that does not sign its notifications (MTN): the notice is only a
    # hint that a status query must follow; its result is never applied.
    verified: bool = True
    # The token the notification carries, when the operator gave one for the request at its
    # creation (Orange's notif_token): it must be the one recorded (`NOTIFICATION_TOKEN` in
    # the request's operator_data), else the notice is refused.
    token: str | None = None


# The key of operator_data under which the operator's page for a card payment is kept (Cauri's
# own card page sends the customer there).
OPERATOR_PAGE = "page_url"
# The key of operator_data under which a request's notification token is kept.
NOTIFICATION_TOKEN = "notification_token"  # noqa: S105 (a key's name, not a secret)


@dataclass(frozen=True)
class Notice:
    """A notification an operator sent us, as it arrived."""

    method: str
    url: str  # as the operator addressed it (under CAURI_PUBLIC_URL when that is set)
    headers: Mapping[str, str]  # case-insensitive
    body: bytes


@dataclass(frozen=True)
class CheckReport:
    """`cauri connectors check`: whether the account works, in plain words."""

    ok: bool
    detail: str
    facts: Mapping[str, Any] | None = None  # what was read (balances, …)


class OperatorAdapter(Protocol):
    # True when the adapter engages no one and decides from the request alone (the
    # simulator): it may be asked inside a transaction, even before the row is recorded.
    decides_offline: bool
    # What `refund` can give back of a payment (`refund_of`): checked before a refund is
    # recorded, so that the operator never sends back more than the ledger takes out.
    refunds: RefundSupport

    async def collect(self, collection: Collection) -> OperatorResult: ...

    async def collection_status(self, collection: Collection) -> OperatorResult: ...

    async def disburse(self, disbursement: Disbursement) -> OperatorResult: ...

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult: ...

    async def refund(self, disbursement: Disbursement) -> OperatorResult: ...

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult: ...

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """Reads a notification the operator sent us; None when it is not authentic or not
        about one of our requests."""
        ...

    async def check(self) -> CheckReport: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Resent:
    """The operator's answer to "send your notification about this request again"."""

    accepted: bool
    detail: str  # in plain words: accepted, or why not
    exchange: Exchange


@runtime_checkable
class ResendsNotifications(Protocol):
    """An operator that sends its notification about a request again when asked (pawaPay's
    resend-callback): reconciliation, when a final notification never came."""

    async def resend_notification(
        self, action: str, request: Collection | Disbursement
    ) -> Resent: ...


@runtime_checkable
class GivesStatements(Protocol):
    """An operator whose API gives a wallet's movements of a day (Wave's Balance &
    Reconciliation API, pawaPay's statements): reconciliation fetches them instead of
    importing files."""

    format: str  # the statement format its file is read with (cauri.reconciliation.formats)

    def statement(self, day: date) -> AsyncIterator[str]:
        """The day's statement (UTC) as a file in `format`, in parts, in order; raises
        StatementUnavailable when the operator does not give it."""
        ...


class StatementUnavailable(Exception):
    """The operator did not give its statement or its balance (refused, unreachable,
    unreadable)."""


@runtime_checkable
class GivesBalances(Protocol):
    """An operator whose API tells what the connector account's wallet holds now (MTN's
    account balances, pawaPay's wallet balances, Wave's balance, CinetPay's transfer
    balance): what reconciliation compares with the ledger's clearing accounts."""

    async def balances(self) -> Mapping[str, int]:
        """Currency → the balance now, in minor units (the operator's wallets in one currency
        summed); raises StatementUnavailable when the operator does not answer or answers
        something unreadable."""
        ...


@runtime_checkable
class PredictsOperators(Protocol):
    """An operator network that can tell whose number it is (pawaPay's predict-provider)."""

    async def predict_operator(self, phone_number: str) -> str | None:
        """The catalogue's operator code for the number (digits with the country code);
        None when it cannot say."""
        ...


@runtime_checkable
class ReportsAvailability(Protocol):
    """An operator network that says which of its routes are up (pawaPay's availability)."""

    async def availability(self, *, ask: bool) -> Mapping[tuple[str, str], str]:
        """(catalogue operator code, collect | disburse | refund) → `operational`,
        `degraded` or `closed`, for what it reports on; {} when it cannot say. `ask`: the
        operator may be asked now if what it last said is stale; otherwise (a payment on
        its way) only what it last said is given."""
        ...
