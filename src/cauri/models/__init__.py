"""All tables; importing this module registers them on `Base.metadata` (for Alembic)."""

from cauri.models.base import Base
from cauri.models.connectors import ConnectorAccount, OperatorRoute
from cauri.models.events import Event, WebhookEndpoint
from cauri.models.jobs import Job
from cauri.models.ledger import LedgerAccount, LedgerPosting, LedgerTransaction
from cauri.models.merchants import ApiKey, FeeRule, Merchant
from cauri.models.operations import OperatorExchange, OperatorOperation
from cauri.models.payments import Payment
from cauri.models.payouts import Payout
from cauri.models.plans import InstallmentPlan, PlanRefund
from cauri.models.platform_settings import PlatformSettings
from cauri.models.refunds import Refund
from cauri.models.webhooks import WebhookAttempt, WebhookDelivery
from cauri.models.workers import WorkerHeartbeat

__all__ = [
    "ApiKey",
    "Base",
    "ConnectorAccount",
    "Event",
    "FeeRule",
    "InstallmentPlan",
    "Job",
    "LedgerAccount",
    "LedgerPosting",
    "LedgerTransaction",
    "Merchant",
    "OperatorExchange",
    "OperatorOperation",
    "OperatorRoute",
    "Payment",
    "Payout",
    "PlanRefund",
    "PlatformSettings",
    "Refund",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WorkerHeartbeat",
]
