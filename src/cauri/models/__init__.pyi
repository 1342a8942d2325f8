"""The tables' models, for the type checker: __init__.py loads each module when one of its
names is first read (lazy_loader reads these imports)."""

from .approvals import MoneyApproval
from .audit import AuditEntry
from .base import Base
from .checkout import CheckoutSession, PaymentLink
from .connectors import ConnectorAccount, OperatorRoute
from .events import Event, WebhookEndpoint
from .jobs import Job
from .ledger import (
    LedgerAccount,
    LedgerCarried,
    LedgerPeriod,
    LedgerPosting,
    LedgerTransaction,
)
from .merchants import ApiError, ApiKey, FeeRule, Merchant
from .operations import OperatorExchange, OperatorOperation
from .payments import Payment
from .payout_batches import PayoutBatch, PayoutBatchDraft, PayoutBatchItem
from .payouts import Payout, PayoutApproval, PayoutDraft
from .people import SignInAttempt, SignInLink, User, UserSession
from .plans import InstallmentPlan, PlanRefund
from .platform_settings import PlatformSettings
from .reconciliation import Reconciliation
from .refunds import Refund
from .statements import Discrepancy, OperatorStatement, StatementLine
from .webhooks import WebhookAttempt, WebhookDelivery
from .workers import WorkerHeartbeat

def load_all() -> None: ...

__all__ = [
    "ApiError",
    "ApiKey",
    "AuditEntry",
    "Base",
    "CheckoutSession",
    "ConnectorAccount",
    "Discrepancy",
    "Event",
    "FeeRule",
    "InstallmentPlan",
    "Job",
    "LedgerAccount",
    "LedgerCarried",
    "LedgerPeriod",
    "LedgerPosting",
    "LedgerTransaction",
    "Merchant",
    "MoneyApproval",
    "OperatorExchange",
    "OperatorOperation",
    "OperatorRoute",
    "OperatorStatement",
    "Payment",
    "PaymentLink",
    "Payout",
    "PayoutApproval",
    "PayoutBatch",
    "PayoutBatchDraft",
    "PayoutBatchItem",
    "PayoutDraft",
    "PlanRefund",
    "PlatformSettings",
    "Reconciliation",
    "Refund",
    "SignInAttempt",
    "SignInLink",
    "StatementLine",
    "User",
    "UserSession",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WorkerHeartbeat",
    "load_all",
]
