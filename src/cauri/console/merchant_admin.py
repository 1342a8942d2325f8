"""A merchant's account beyond merchant_actions' forms: its creation (its test and live keys
shown on the answer, once), its payout account and validation, who bears its fees, a key
rotation, its webhook endpoints and their signing secrets (a new one shown once), and a
credit of its balance (finance: the form is on the merchant's own page, which finance
reads). Each form runs the staff's action of that name (cauri.staff.actions), audited as
the CLI's `cauri merchants create|set-payout-account|set-fee-bearer|credit` and
`cauri keys rotate` are; a key or secret is never in an address nor in the log."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.acting import actor, permission
from cauri.console.auth import SignedIn, Staff
from cauri.console.merchant_actions import MODES, PATH, act, action_page
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render, templates
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.kit.money import Currency
from cauri.merchants.keys import GRACES
from cauri.merchants.service import NewMerchant
from cauri.models import MoneyApproval
from cauri.models.merchants import MERCHANT_STATUSES
from cauri.people.accounts import IssuedLink
from cauri.runtime import Runtime
from cauri.signin.doors import DASHBOARD
from cauri.signin.forms import decimal_field, posted
from cauri.staff import actions, reads

pages = Pages()
# The merchant's page (cauri.console.merchants) shows the credit form.
templates.env.globals["currencies_credited"] = tuple(Currency)


def _mode(fields: dict[str, str]) -> bool:
    mode = fields.get("mode", "")
    if mode not in MODES:
        raise InvalidRequest.field("mode", f"Mode inconnu : {mode} (test ou live).")
    return MODES[mode]


# --- creation -------------------------------------------------------------------------


@pages.post("/merchants", permission(actions.CREATE_MERCHANT))
async def create_merchant(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """Its keys are on this answer only (no redirect: an address would keep them)."""
    fields = await posted(request)
    created = await attempt(
        session,
        lambda: actions.create_merchant(
            session,
            runtime,
            actor(staff),
            name=fields.get("name", ""),
            status=fields.get("status", "active"),
        ),
    )
    context: dict[str, object] = {"statuses": MERCHANT_STATUSES, "typed": fields}
    if isinstance(created, NewMerchant):
        return render(request, "console/merchant_created.html", context | {"new": created})
    return render(
        request,
        "console/merchant_created.html",
        context | {"refusal": created},
        created.http_status,
    )


# --- on a merchant's administration page ----------------------------------------------


@pages.post(PATH + "/payout-account", permission(actions.SET_PAYOUT_ACCOUNT))
async def set_payout_account(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """Also the "validate" button: the account as it is, marked validated."""
    fields = await posted(request)
    return await act(
        request,
        staff,
        session,
        merchant_id,
        lambda: actions.set_payout_account(
            session,
            runtime,
            actor(staff),
            merchant_id,
            phone_number=fields.get("phone_number", ""),
            operator=fields.get("operator", ""),
            validated=fields.get("validated") == "on",
        ),
        "compte-de-retrait",
    )


@pages.post(PATH + "/fee-bearer", permission(actions.SET_FEE_BEARER))
async def set_fee_bearer(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    bearer = (await posted(request)).get("fee_bearer", "")
    return await act(
        request,
        staff,
        session,
        merchant_id,
        lambda: actions.set_fee_bearer(session, runtime, actor(staff), merchant_id, bearer),
        "frais-a-la-charge",
    )


@pages.post(PATH + "/keys/rotate", permission(actions.ROTATE_KEYS))
async def rotate_keys(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    fields = await posted(request)

    async def rotate() -> str:
        livemode = _mode(fields)
        grace = fields.get("grace", "")
        if grace not in GRACES:
            raise InvalidRequest.field("grace", f"Délai inconnu : {grace}.")
        return await actions.rotate_keys(
            session, runtime, actor(staff), merchant_id, livemode=livemode, grace=GRACES[grace][1]
        )

    key = await attempt(session, rotate)
    if isinstance(key, CauriError):
        return await action_page(request, staff, session, merchant_id, key)
    return await action_page(request, staff, session, merchant_id, new_key=key)


@pages.post(PATH + "/webhook", permission(actions.SET_WEBHOOK_ENDPOINT))
async def set_webhook_endpoint(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """An empty address disables the environment's notifications."""
    fields = await posted(request)

    async def change() -> None:
        await actions.set_webhook_endpoint(
            session,
            runtime,
            actor(staff),
            merchant_id,
            livemode=_mode(fields),
            url=fields.get("url") or None,
        )

    return await act(request, staff, session, merchant_id, change, "webhook")


@pages.post(PATH + "/webhook/rotate-secret", permission(actions.ROTATE_WEBHOOK_SECRET))
async def rotate_webhook_secret(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    fields = await posted(request)
    secret = await attempt(
        session,
        lambda: actions.rotate_webhook_secret(
            session, runtime, actor(staff), merchant_id, livemode=_mode(fields)
        ),
    )
    if isinstance(secret, CauriError):
        return await action_page(request, staff, session, merchant_id, secret)
    return await action_page(request, staff, session, merchant_id, new_secret=secret)


async def _with_link(
    request: Request,
    staff: SignedIn,
    session: AsyncSession,
    runtime: Runtime,
    merchant_id: str,
    issue: Callable[[], Awaitable[IssuedLink]],
) -> Response:
    """A team member's one-time link, shown once on the page, or the refusal saying why."""
    issued = await attempt(session, issue)
    if isinstance(issued, CauriError):
        return await action_page(request, staff, session, merchant_id, issued)
    link = DASHBOARD.welcome_link(request, runtime.settings, issued.token)
    return await action_page(request, staff, session, merchant_id, new_link=link)


@pages.post(PATH + "/team", permission(actions.INVITE_MEMBER))
async def invite_member(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """As `cauri merchants invite`: a member of the merchant's team (its first owner)."""
    fields = await posted(request)
    return await _with_link(
        request,
        staff,
        session,
        runtime,
        merchant_id,
        lambda: actions.invite_member(
            session,
            runtime,
            actor(staff),
            merchant_id,
            email=fields.get("email", ""),
            role=fields.get("role", ""),
        ),
    )


@pages.post(PATH + "/team/link", permission(actions.LINK_MEMBER))
async def link_member(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """As `cauri merchants link-member`: a member's new link, resetting password and TOTP."""
    email = (await posted(request)).get("email", "")
    return await _with_link(
        request,
        staff,
        session,
        runtime,
        merchant_id,
        lambda: actions.link_member(session, runtime, actor(staff), merchant_id, email),
    )


# --- on the merchant's page -----------------------------------------------------------


async def _merchant_page(
    request: Request,
    session: AsyncSession,
    merchant_id: str,
    refusal: CauriError,
    typed: dict[str, str],
) -> Response:
    """The merchant's page again, the refusal's message above the form as it was typed."""
    seen = await reads.merchant_overview(session, merchant_id)
    context = {"seen": seen, "refusal": refusal, "typed": typed}
    return render(request, "console/merchant.html", context, refusal.http_status)


@pages.post("/merchants/{merchant_id}/credit", permission(actions.CREDIT_BALANCE))
async def credit_balance(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, merchant_id: str
) -> Response:
    """A bank transfer received from the merchant: its amount to the available balance."""
    fields = await posted(request)

    async def credit() -> int | MoneyApproval:
        amount = decimal_field(fields, "amount")
        if amount is None:
            raise InvalidRequest.field("amount", "Indiquez le montant à créditer.")
        return await actions.credit_balance(
            session,
            runtime,
            actor(staff),
            merchant_id,
            livemode=_mode(fields),
            amount=amount,
            currency=fields.get("currency", ""),
            reason=fields.get("reason", ""),
        )

    credited = await attempt(session, credit)
    if isinstance(credited, CauriError):
        return await _merchant_page(request, session, merchant_id, credited, fields)
    done = "credit-demande" if isinstance(credited, MoneyApproval) else "credit"
    return redirect(f"{PREFIX}/merchants/{merchant_id}?fait={done}")
