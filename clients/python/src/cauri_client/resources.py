"""What the API returns, as frozen dataclasses read from its JSON.

Field names are the API's own. The API may add fields in a minor version: a field this
version does not know is kept in `extra`, never refused. Statuses and types are plain
strings for the same reason (a new status is a value to handle, not a crash). Amounts are
numbers in the currency's unit, as the API sends them.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Self, Union, get_args, get_origin, get_type_hints


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resource:
    """A resource of the API; `extra` holds the fields this version of the client ignores."""

    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        hints = _hints(cls)
        known = {name: _convert(hint, data.get(name)) for name, hint in hints.items()}
        return cls(**known, extra={k: v for k, v in data.items() if k not in hints})


_HINTS: dict[type[Resource], dict[str, Any]] = {}


def _hints(cls: type[Resource]) -> dict[str, Any]:
    """The fields read from JSON and their types (`extra` is not one of them)."""
    if cls not in _HINTS:
        hints = get_type_hints(cls)
        fields = dataclasses.fields(cls)
        _HINTS[cls] = {f.name: hints[f.name] for f in fields if f.name != "extra"}
    return _HINTS[cls]


def _convert(hint: Any, value: Any) -> Any:
    """`value` as the type `hint` says, when its JSON shape fits; unchanged otherwise (the
    client reads what the server sends rather than fail on it)."""
    if value is None:
        return None
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        (inner,) = [arg for arg in get_args(hint) if arg is not type(None)]
        return _convert(inner, value)
    if origin is tuple and isinstance(value, list):
        item = get_args(hint)[0]
        return tuple(_convert(item, element) for element in value)
    if hint is datetime and isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(hint, type) and issubclass(hint, Resource) and isinstance(value, Mapping):
        return hint.from_json(value)
    return value


@dataclasses.dataclass(frozen=True, kw_only=True)
class Customer(Resource):
    firstname: str | None
    lastname: str | None
    email: str | None
    phone_number: str | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class PaymentModeSummary(Resource):
    """The mode a payment used; webhook notifications add `country` and `country_code`."""

    id: int
    name: str
    type: str
    operator: str
    country: str | None
    country_code: str | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Payment(Resource):
    """A payment or an instalment of a plan. `status`: pending, succeeded, refunded, failed."""

    reference: str
    identifier: str
    external_id: str | None
    status: str
    amount: float
    fee_amount: float
    total_amount: float
    fee_bearer: str
    net_amount: float
    amount_refunded: float
    currency: str
    description: str | None
    payment_mode: PaymentModeSummary
    customer: Customer
    payment_url: str | None
    checkout_session: str | None
    payment_link: str | None
    failure_code: str | None
    failure_message: str | None
    metadata: Mapping[str, Any] | None
    livemode: bool
    created_at: datetime
    updated_at: datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class Refund(Resource):
    """A refund of one payment. `status`: pending, succeeded, failed."""

    reference: str
    payment: str
    external_id: str | None
    status: str
    amount: float
    currency: str
    reason: str | None
    failure_code: str | None
    failure_message: str | None
    livemode: bool
    created_at: datetime
    completed_at: datetime | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Payout(Resource):
    """Money sent from the balance (reference `pyo_…`). `status`: pending, succeeded,
    failed; `phone_number` comes back masked."""

    reference: str
    status: str
    amount: float
    fee_amount: float
    total_debited: float
    currency: str
    operator: str
    phone_number: str
    beneficiary_name: str | None
    reason: str | None
    awaiting_approval: bool
    failure_code: str | None
    failure_message: str | None
    external_id: str | None
    metadata: Mapping[str, Any] | None
    livemode: bool
    completed_at: datetime | None
    created_at: datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class PayoutBatchCounts(Resource):
    """How a batch's items stand: `queued` (not made into a payout yet), `refused` (each
    with its `error`), and its payouts by status."""

    total: int
    queued: int
    refused: int
    pending: int
    succeeded: int
    failed: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class PayoutBatchItem(Resource):
    """One item, in the order sent: `payout` the reference of the payout made for it, or
    `error` (`code`, `message`, `details`) as `POST /payouts` would have answered."""

    external_id: str | None
    payout: str | None
    error: Mapping[str, Any] | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class PayoutBatch(Resource):
    """Up to 1,000 payouts sent in one call (reference `pyb_…`). `status`: processing, then
    completed once every item is refused or has a final payout; `items` on its creation and
    on `payout_batches.get` only."""

    reference: str
    external_id: str
    status: str
    livemode: bool
    counts: PayoutBatchCounts
    items: tuple[PayoutBatchItem, ...] | None
    created_at: datetime
    completed_at: datetime | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstallmentPlan(Resource):
    """A plan paid in instalments; `payments` only when read by `installment_plans.get`."""

    reference: str
    external_id: str | None
    status: str
    description: str | None
    currency: str
    target_amount: float
    creation_fee_amount: float
    cancellation_penalty_percent: float
    paid_amount: float
    remaining_amount: float
    cancellation_reason: str | None
    refunded_amount: float | None
    penalty_amount: float | None
    resolution: str | None
    resolution_reason: str | None
    resolved_at: datetime | None
    livemode: bool
    expires_at: datetime
    completed_at: datetime | None
    cancelled_at: datetime | None
    created_at: datetime
    payments: tuple[Payment, ...] | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fees(Resource):
    percent: float
    fixed: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class Availability(Resource):
    """`operational`, `degraded` or `closed`, for collections and for payouts."""

    collection: str
    payout: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class PaymentMode(Resource):
    """An entry of the catalogue, with the fees applied to this account. Pass `operator`
    as a payment's operator; `requires_otp` says the customer must give a one-time code."""

    id: int
    name: str
    type: str
    operator: str
    country: str | None
    country_code: str | None
    requires_otp: bool
    fees: Fees
    availability: Availability


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModePrediction(Resource):
    """The operator a phone number most likely belongs to (`payment_modes.predict`)."""

    phone_number: str
    country_code: str
    operator: str | None
    payment_mode_id: int | None
    confidence: str
    source: str
    carrier: str | None
    wallets: tuple[str, ...]
    note: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Balance(Resource):
    """The balance in one currency of the key's environment."""

    currency: str
    available: float
    escrowed: float
    pending_payouts: float
    livemode: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class BalanceTransaction(Resource):
    """A movement of the balance. `source` is the reference of what moved it."""

    type: str
    amount: float
    fee: float
    net: float
    currency: str
    source: str | None
    livemode: bool
    created_at: datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class WebhookEndpoint(Resource):
    """The environment's webhook endpoint; `url` None means notifications are off."""

    url: str | None
    secret: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class WebhookDelivery(Resource):
    """A line of the delivery log; `id` is the event's id. `status`: pending, success, failed."""

    id: str
    event: str
    resource: str | None
    url: str
    status: str
    attempts: int
    response_code: int | None
    last_error: str | None
    next_attempt_at: datetime | None
    created_at: datetime
    delivered_at: datetime | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class WebhookTest(Resource):
    """The answer of `webhooks.send_test`: `sent` is False, with a `reason`, when no
    endpoint is set."""

    sent: bool
    delivery_id: str
    url: str | None
    reason: str | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CheckoutSession(Resource):
    """A hosted payment page: send the customer to `url`. `status`: open, complete, expired."""

    reference: str
    url: str
    status: str
    amount: float | None
    currency: str
    description: str | None
    external_id: str | None
    livemode: bool
    expires_at: datetime
    completed_at: datetime | None
    payment: str | None
    attempts: tuple[str, ...]
    plan: str | None
    return_url: str | None
    payment_link: str | None
    callback_url: str | None
    customer: Customer
    country: str | None
    operators: tuple[str, ...] | None
    metadata: Mapping[str, Any] | None
    created_at: datetime
    updated_at: datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class PaymentLink(Resource):
    """A shareable link (and QR code) that opens a checkout session for each visitor."""

    reference: str
    url: str
    qr_code_url: str
    active: bool
    uses: int
    description: str
    amount: float | None
    min_amount: float | None
    max_amount: float | None
    currency: str
    reusable: bool
    max_uses: int | None
    expires_at: datetime | None
    return_url: str | None
    external_id: str | None
    metadata: Mapping[str, Any] | None
    livemode: bool
    created_at: datetime
    updated_at: datetime


@dataclasses.dataclass(frozen=True, kw_only=True)
class Event(Resource):
    """A notification (`GET /events`, or a webhook's body). `id` is the key to deduplicate
    on: the same event can arrive more than once. An event of a type this client does not
    know is an Event all the same, its `data` as sent."""

    id: str
    event: str
    livemode: bool
    created_at: datetime
    data: Mapping[str, Any]

    @property
    def object(self) -> Payment | Refund | Payout | CheckoutSession | None:
        """`data` as the resource it describes (by the event's prefix: `payment.`,
        `refund.`, `payout.`, `checkout_session.`); None for other events."""
        kind = _EVENT_OBJECTS.get(self.event.partition(".")[0])
        return None if kind is None else kind.from_json(self.data)


_EVENT_OBJECTS: Mapping[str, type[Payment | Refund | Payout | CheckoutSession]] = {
    "payment": Payment,
    "refund": Refund,
    "payout": Payout,
    "checkout_session": CheckoutSession,
}


@dataclasses.dataclass(frozen=True)
class FeedPage:
    """A page of `events.follow`: the events, each also as the JSON object the API sent
    (what `cauri-client listen` forwards: serialized compactly, the bytes of a delivery),
    and where the page ends (give it back to read on)."""

    events: tuple[Event, ...]
    sent: tuple[Mapping[str, Any], ...]
    cursor: str

    @classmethod
    def from_envelope(cls, envelope: Mapping[str, Any]) -> FeedPage:
        sent = tuple(envelope["data"])
        return cls(tuple(Event.from_json(entry) for entry in sent), sent, envelope["cursor"])
