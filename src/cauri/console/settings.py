"""The platform's settings (`cauri settings show|set`): default fees of payments and
payouts, plans' creation fee and cancellation penalty, and the amount above which a payout
needs two people's approvals, per currency. Everyone reads them; changing them takes
fees.manage, through the staff's action (cauri.staff.actions.set_settings, audited), one
currency's fixed amounts at a time. An empty field keeps the setting as it is; a setting
that may have no value (the dual approval, the plan creation fee) has a box to remove it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.kit.money import FIXED_FEE_CURRENCIES
from cauri.models import MoneyApproval, PlatformSettings
from cauri.platform.service import FIXED_SETTINGS, fixed_column, may_be_unset
from cauri.signin.forms import decimal_field, posted
from cauri.staff import actions, reads
from cauri.staff.roles import Permission

PATH = "/settings"


@dataclass(frozen=True)
class Setting:
    name: str  # the service's (and `cauri settings set`'s option, dashed)
    label: str

    @property
    def fixed(self) -> bool:
        """An amount per currency, else a percentage."""
        return self.name in FIXED_SETTINGS

    @property
    def may_be_unset(self) -> bool:
        return may_be_unset(self.name)


SETTINGS = (
    Setting("fee_percent", "Frais des paiements : pourcentage"),
    Setting("fee_fixed", "Frais des paiements : montant fixe"),
    Setting("payout_fee_percent", "Frais des transferts : pourcentage"),
    Setting("payout_fee_fixed", "Frais des transferts : montant fixe"),
    Setting("plan_creation_fee_percent", "Frais de création d'un plan : pourcentage"),
    Setting("plan_creation_fee_fixed", "Frais de création d'un plan : montant fixe"),
    Setting("plan_penalty_percent", "Pénalité d'annulation d'un plan : pourcentage"),
    Setting("payout_dual_approval_above", "Deux approbations pour un transfert au-delà de"),
)

pages = Pages()
DONE = {
    "1": "Paramètres enregistrés.",
    "demande": "Relever ou retirer le montant de double approbation demande l'accord d'un "
    "second administrateur : la demande attend dans Approbations.",
}


@dataclass(frozen=True)
class Shown:
    setting: Setting
    percent: Decimal | None  # a percentage's value
    amounts: dict[str, int | None]  # a fixed setting's, by currency, in minor units


def _shown(row: PlatformSettings | None) -> list[Shown]:
    """Without a row (never set), each column's default: 0, or unset where it may be."""
    columns = PlatformSettings.__mapper__.columns

    def stored(column: str) -> Any:
        value = None if row is None else getattr(row, column)
        if value is None and not columns[column].nullable:
            return columns[column].type.python_type()  # its zero: Decimal or int
        return value

    def shown(setting: Setting) -> Shown:
        if setting.fixed:
            amounts = {c: stored(fixed_column(setting.name, c)) for c in FIXED_FEE_CURRENCIES}
            return Shown(setting, None, amounts)
        return Shown(setting, stored(setting.name), {})

    return [shown(setting) for setting in SETTINGS]


async def _page(
    request: Request, session: AsyncSession, refusal: CauriError | None = None
) -> Response:
    row = await reads.platform_settings(session)
    context = {
        "shown": _shown(row),
        "updated_at": row and row.updated_at,
        "currencies": FIXED_FEE_CURRENCIES,
        "done": DONE.get(request.query_params.get("fait", "")),
        "refusal": refusal,
    }
    return render(
        request, "console/settings.html", context, refusal.http_status if refusal else 200
    )


@pages.get(PATH, Permission.READ, menu="Paramètres")
async def settings(request: Request, staff: Staff, session: SessionDep) -> Response:
    return await _page(request, session)


@pages.post(PATH, permission(actions.SET_SETTINGS))
async def set_settings(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    fields = await posted(request)

    async def change() -> object:
        given: dict[str, Decimal | None] = {
            setting.name: value
            for setting in SETTINGS
            for value in [decimal_field(fields, setting.name)]
            if value is not None
        }
        given |= {setting.name: None for setting in SETTINGS if fields.get(f"unset-{setting.name}")}
        if not given:
            raise InvalidRequest("Remplissez au moins un champ : un champ vide ne change rien.")
        return await actions.set_settings(
            session, runtime, actor(staff), given, currency=fields.get("currency", "XOF")
        )

    done = await attempt(session, change)
    if isinstance(done, CauriError):
        return await _page(request, session, done)
    return redirect(f"{PREFIX}{PATH}?fait={'demande' if isinstance(done, MoneyApproval) else 1}")
