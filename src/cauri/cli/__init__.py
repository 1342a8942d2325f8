"""`cauri`: the operator's command line (DESIGN: operator-facing contract). One module per
command group (`cli/<group>.py`), the helpers they share in `cli/common.py` (running) and
`cli/output.py` (printing); this root only names them, each with its help, and imports a
group's module when that group runs (`cli/lazy.py`): `cauri --help` starts at once."""

from __future__ import annotations

from cauri.cli.common import check_settings
from cauri.cli.lazy import Entry, root

_COMMANDS = (
    (
        "migrate",
        Entry(
            "cauri.cli.service",
            "migrate",
            "Brings the database schema up to date (alembic upgrade head).",
        ),
    ),
    (
        "serve",
        Entry(
            "cauri.cli.service",
            "serve",
            "Runs the API (and, unless --no-worker, the background worker).",
        ),
    ),
    (
        "worker",
        Entry(
            "cauri.cli.service",
            "run_worker",
            "Runs background jobs only: deliveries, delayed outcomes, expiries, refunds.",
        ),
    ),
    ("merchants", Entry("cauri.cli.merchants", "merchants_cli", "Merchant accounts.")),
    ("keys", Entry("cauri.cli.keys", "keys_cli", "API keys.")),
    ("settings", Entry("cauri.cli.settings", "settings_cli", "Platform-wide settings.")),
    (
        "connectors",
        Entry("cauri.cli.connectors", "connectors_cli", "Connector accounts (live money)."),
    ),
    (
        "routes",
        Entry(
            "cauri.cli.connectors",
            "routes_cli",
            "Which connector carries each operator's operations (live).",
        ),
    ),
    (
        "exchanges",
        Entry("cauri.cli.connectors", "exchanges_cli", "What was exchanged with operators."),
    ),
    (
        "db",
        Entry("cauri.cli.database", "db_cli", "The embedded PostgreSQL (no CAURI_DATABASE_URL)."),
    ),
    ("payments", Entry("cauri.cli.payments", "payments_cli", "Payments, across merchants.")),
    ("plans", Entry("cauri.cli.plans", "plans_cli", "Installment plans.")),
    (
        "search",
        Entry(
            "cauri.cli.search",
            "search_cli",
            "Search payments, plans, payouts and refunds across merchants.",
        ),
    ),
    ("ledger", Entry("cauri.cli.ledger", "ledger_cli", "The ledger: balances and reconciliation.")),
    (
        "reconcile",
        Entry(
            "cauri.cli.reconcile",
            "reconcile_cli",
            "Operators' statements against Cauri's operations and ledger.",
        ),
    ),
    (
        "export",
        Entry(
            "cauri.cli.exports",
            "export_cli",
            "CSV exports of payments, payouts and refunds for a period.",
        ),
    ),
    ("staff", Entry("cauri.cli.staff", "staff_cli", "Staff accounts of the web console.")),
    ("audit", Entry("cauri.cli.audit", "audit_cli", "The audit log of staff and CLI actions.")),
    ("webhooks", Entry("cauri.cli.webhooks", "webhooks_cli", "Merchants' webhook deliveries.")),
    (
        "approvals",
        Entry(
            "cauri.cli.approvals",
            "approvals_cli",
            "Live money actions waiting for a second person's approval.",
        ),
    ),
    (
        "archive",
        Entry(
            "cauri.cli.history",
            "archive",
            "Archives the history before a month: dumped, checked, then dropped.",
        ),
    ),
    ("secrets", Entry("cauri.cli.secrets", "secrets_cli", "Secrets at rest (CAURI_SECRET_KEY).")),
    (
        "payouts",
        Entry(
            "cauri.cli.payouts",
            "payouts_cli",
            "Payouts: those held for approval, and batches of payouts.",
        ),
    ),
)

app = root("cauri", "Cauri payment service.", _COMMANDS, before=check_settings)
