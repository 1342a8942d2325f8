"""A merchant's administration (administrators): its status, its API keys (create: the key
shown this once; revoke by id), its fee rule per payment mode and its live third-party
payout limits, each a form posted to the staff's action of that name
(cauri.staff.actions), audited as the CLI's `cauri merchants set-status|set-fee|set-limits`
and `cauri keys create|revoke` are.

Its other forms (payout account, fee bearer, key rotation, webhook endpoint) are
cauri.console.merchant_admin's. A refusal is the page again with its message, nothing
written; a change sends the browser back to the page (303) with which form was done, the
page showing the state read again; a new key or secret is on the answer itself, once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, permission
from cauri.console.auth import SignedIn, Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest, NotFound
from cauri.merchants.contract import FeeBearer
from cauri.merchants.keys import GRACES
from cauri.models.merchants import MERCHANT_STATUSES
from cauri.models.people import MERCHANT_ROLES
from cauri.people import accounts
from cauri.people.realm import MERCHANT
from cauri.signin.forms import decimal_field, posted
from cauri.staff import actions, reads
from cauri.staff.roles import Permission

PATH = "/merchants/{merchant_id}/actions"
MODES = {"test": False, "live": True}
LIMITS = ("per_payout", "daily", "approval_threshold")
# What the page says after each form, by the name its address carries (fixed words: an
# address cannot make the page say anything else).
DONE = {
    "statut": "Statut enregistré.",
    "cle-revoquee": "Clé révoquée : elle est refusée dès maintenant (401).",
    "plafonds": "Plafonds enregistrés.",
    "frais": "Règle de frais enregistrée.",
    "compte-de-retrait": "Compte de retrait enregistré.",
    "frais-a-la-charge": "Payeur des frais enregistré : il vaut pour les paiements à venir.",
    "webhook": "Endpoint de webhook enregistré.",
}
CURRENCIES = ("XOF", "EUR", "USD")
# How long a rotation leaves the merchant's other keys of that mode working.

pages = Pages()


def action_path(merchant_id: str) -> str:
    return PREFIX + PATH.format(merchant_id=merchant_id)


async def action_page(
    request: Request,
    staff: SignedIn,
    session: AsyncSession,
    merchant_id: str,
    refusal: CauriError | None = None,
    new_key: str | None = None,
    new_secret: str | None = None,
    new_link: str | None = None,
) -> Response:
    """`new_key`, `new_secret`, `new_link` (a team member's one-time link): shown on this
    answer only (never an address: it would keep them)."""
    context = {
        "seen": await reads.merchant_overview(session, merchant_id),
        "statuses": MERCHANT_STATUSES,
        "done": DONE.get(request.query_params.get("fait", "")),
        "refusal": refusal,
        "new_key": new_key,
        "new_secret": new_secret,
        "new_link": new_link,
        "team": await accounts.list_accounts(session, MERCHANT, merchant_id),
        "team_roles": MERCHANT_ROLES,
        "graces": GRACES,
        "bearers": tuple(FeeBearer),
        "currencies": CURRENCIES,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "console/merchant_actions.html", context, status)


@pages.get(PATH, Permission.MANAGE_MERCHANTS)
async def merchant_actions(
    request: Request, staff: Staff, session: SessionDep, merchant_id: str
) -> Response:
    return await action_page(request, staff, session, merchant_id)


async def act(
    request: Request,
    staff: SignedIn,
    session: AsyncSession,
    merchant_id: str,
    change: Callable[[], Awaitable[Any]],
    done: str,
) -> Response:
    result = await attempt(session, change)
    if isinstance(result, CauriError):
        return await action_page(request, staff, session, merchant_id, result)
    return redirect(f"{action_path(merchant_id)}?fait={done}")


@pages.post(PATH + "/status", permission(actions.SET_MERCHANT_STATUS))
async def set_status(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    status = (await posted(request)).get("status", "")
    return await act(
        request,
        staff,
        session,
        merchant_id,
        lambda: actions.set_merchant_status(session, runtime, actor(staff), merchant_id, status),
        "statut",
    )


@pages.post(PATH + "/keys/{key_id}/revoke", permission(actions.REVOKE_KEY))
async def revoke_key(
    request: Request,
    staff: Staff,
    session: SessionDep,
    runtime: RuntimeDep,
    merchant_id: str,
    key_id: str,
) -> Response:
    async def revoke() -> None:
        # Only this merchant's key: the page lists no other.
        owned = await reads.merchant_overview(session, merchant_id)
        if key_id not in {str(key.id) for key in owned.keys}:
            raise NotFound(f"Ce marchand n'a pas de clé n° {key_id}.")
        await actions.revoke_key(session, runtime, actor(staff), key_id)

    return await act(request, staff, session, merchant_id, revoke, "cle-revoquee")


@pages.post(PATH + "/keys", permission(actions.CREATE_KEY))
async def create_key(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """The new key is on this answer only (no redirect: an address would keep it)."""
    mode = (await posted(request)).get("mode", "")

    async def create() -> str:
        if mode not in MODES:
            raise InvalidRequest.field("mode", f"Mode inconnu : {mode} (test ou live).")
        return await actions.create_key(
            session, runtime, actor(staff), merchant_id, livemode=MODES[mode], expires_at=None
        )

    key = await attempt(session, create)
    if isinstance(key, CauriError):
        return await action_page(request, staff, session, merchant_id, key)
    return await action_page(request, staff, session, merchant_id, new_key=key)


def _amount(fields: dict[str, str], name: str) -> int | None:
    """A whole amount of XOF; empty: unchanged."""
    text = fields.get(name, "").replace(" ", "").replace("\u202f", "")
    if not text:
        return None
    if not text.isdigit():
        raise InvalidRequest.field(name, f"Montant invalide : {fields[name]} (un entier de XOF).")
    return int(text)


@pages.post(PATH + "/limits", permission(actions.SET_LIMITS))
async def set_limits(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    fields = await posted(request)

    async def change() -> None:
        per_payout, daily, threshold = (_amount(fields, name) for name in LIMITS)
        await actions.set_limits(
            session,
            runtime,
            actor(staff),
            merchant_id,
            per_payout=per_payout,
            daily=daily,
            approval_threshold=threshold,
        )

    return await act(request, staff, session, merchant_id, change, "plafonds")


@pages.post(PATH + "/fees", permission(actions.SET_FEE))
async def set_fee(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """The whole rule of one payment mode (or `payout`): an empty amount is 0."""
    fields = await posted(request)

    async def change() -> None:
        await actions.set_fee(
            session,
            runtime,
            actor(staff),
            merchant_id,
            mode=fields.get("fee_mode", ""),
            percent=decimal_field(fields, "percent"),
            fixed=decimal_field(fields, "fixed"),
            disabled=fields.get("disabled") == "on",
            currency=fields.get("currency", "XOF"),
        )

    return await act(request, staff, session, merchant_id, change, "frais")
