"""How pages behind a door (the console, the dashboard) write values: fr-FR amounts,
percentages and dates, statuses in French words."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from jinja2 import Environment

from cauri.kit.money import format_amount
from cauri.kit.wording import status_word
from cauri.signin.audit_entries import ACTOR_PLACES_FR


def format_money(minor: int | None, currency: str) -> str:
    """fr-FR, with the currency (`cauri.kit.money.format_amount`); ledger balances may be
    below zero (operators' clearing accounts)."""
    if minor is None:
        return "—"
    return ("-" if minor < 0 else "") + format_amount(abs(minor), currency)


def format_percent(share: float | None) -> str:
    """`66,7 %`; a dash while there is nothing to divide."""
    if share is None:
        return "—"
    return f"{share * 100:.1f}".replace(".", ",") + "\u202f%"


def format_decimal(value: Decimal) -> str:
    """`2,5` for Decimal("2.5000"): fr-FR, no trailing zero."""
    return f"{value.normalize():f}".replace(".", ",")


# Values that kit.wording does not word (merchants', approvals', routes' states).
_LABELS = {
    "active": "actif",
    "kyc_pending": "KYC en attente",
    "suspended": "suspendu",
    "required": "à approuver",
    "approved": "approuvé",
    "rejected": "rejeté",
    "operational": "opérationnel",
    "degraded": "dégradé",
    "closed": "fermé",
}


def status_label(status: str | None) -> str:
    if status is None:
        return "—"
    return _LABELS.get(status) or status_word(status)


def format_datetime(instant: datetime | None) -> str:
    """`25/11/2026 14:32 UTC` (fr-FR order; the platform's times are UTC)."""
    if instant is None:
        return "—"
    return instant.astimezone(UTC).strftime("%d/%m/%Y %H:%M UTC")


def install(env: Environment) -> None:
    """The filters every page behind a door uses: `amount`, `percent`, `decimal`, `status`,
    `mode`, `datetime`; the audit entries' `actor_places`."""
    env.filters["amount"] = format_money
    env.filters["percent"] = format_percent
    env.filters["decimal"] = format_decimal
    env.filters["status"] = status_label
    env.filters["mode"] = lambda livemode: "live" if livemode else "test"
    env.filters["datetime"] = format_datetime
    env.globals["actor_places"] = ACTOR_PLACES_FR
