"""All tables; importing this module registers them on `Base.metadata` (for Alembic)."""

from cauri.models.approvals import MoneyApproval
from cauri.models.audit import AuditEntry
from cauri.models.base import Base
from cauri.models.checkout import CheckoutSession, PaymentLink
from cauri.models.connectors import ConnectorAccount, OperatorRoute
from cauri.models.events import Event, WebhookEndpoint
from cauri.models.jobs import Job
from cauri.models.ledger import LedgerAccount, LedgerPosting, LedgerTransaction
from cauri.models.merchants import ApiError, ApiKey, FeeRule, Merchant
from cauri.models.operations import OperatorExchange, OperatorOperation
from cauri.models.payments import Payment
from cauri.models.payout_batches import PayoutBatch, PayoutBatchDraft, PayoutBatchItem
from cauri.models.payouts import Payout, PayoutApproval, PayoutDraft
from cauri.models.people import SignInAttempt, SignInLink, User, UserSession
from cauri.models.plans import InstallmentPlan, PlanRefund
from cauri.models.platform_settings import PlatformSettings
from cauri.models.reconciliation import Reconciliation
from cauri.models.refunds import Refund
from cauri.models.statements import Discrepancy, OperatorStatement, StatementLine
from cauri.models.webhooks import WebhookAttempt, WebhookDelivery
from cauri.models.workers import WorkerHeartbeat

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
]
