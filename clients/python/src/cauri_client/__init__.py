"""Python client of the Cauri payment API.

    from cauri_client import Cauri

    with Cauri("sk_test_…", base_url="https://pay.example.com") as cauri:
        payment = cauri.payments.create(
            amount=5000, operator="mtn", phone_number="22997000000", external_id="order-42"
        )

See the package's README for the rest: async, lists, errors, retries, webhooks.
"""

from cauri_client.client import AsyncCauri, Cauri
from cauri_client.errors import (
    CauriError,
    Conflict,
    ConnectionFailed,
    InsufficientFunds,
    InvalidRequest,
    KeyExpired,
    MerchantInactive,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    PaymentFailed,
    PayoutFailed,
    PayoutLimitExceeded,
    RateLimited,
    RefundFailed,
    ServerError,
    Unauthorized,
    UnexpectedResponse,
)
from cauri_client.resources import (
    Balance,
    BalanceTransaction,
    CheckoutSession,
    Event,
    InstallmentPlan,
    Payment,
    PaymentLink,
    PaymentMode,
    Payout,
    PayoutBatch,
    PayoutBatchCounts,
    PayoutBatchItem,
    Refund,
    WebhookDelivery,
    WebhookEndpoint,
)
from cauri_client.retries import RetryPolicy

__all__ = [
    "AsyncCauri",
    "Balance",
    "BalanceTransaction",
    "Cauri",
    "CauriError",
    "CheckoutSession",
    "Conflict",
    "ConnectionFailed",
    "Event",
    "InstallmentPlan",
    "InsufficientFunds",
    "InvalidRequest",
    "KeyExpired",
    "MerchantInactive",
    "MethodNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "Payment",
    "PaymentFailed",
    "PaymentLink",
    "PaymentMode",
    "Payout",
    "PayoutBatch",
    "PayoutBatchCounts",
    "PayoutBatchItem",
    "PayoutFailed",
    "PayoutLimitExceeded",
    "RateLimited",
    "Refund",
    "RefundFailed",
    "RetryPolicy",
    "ServerError",
    "Unauthorized",
    "UnexpectedResponse",
    "WebhookDelivery",
    "WebhookEndpoint",
]
