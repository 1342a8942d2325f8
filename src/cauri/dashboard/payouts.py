"""Payouts asked for from the dashboard, with the API's rules: to the merchant's validated
account or to a third party (`{base}/payouts/new`); live ones above the owner's threshold
wait as drafts for a second member's approval (`/dashboard/payouts/drafts`, where the owner
sets the threshold). cauri.team.drafts decides; this module reads forms and shows pages.
Registered before the payouts' detail pages, whose `{reference}` would take `new`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.dashboard.acting import actor, caller
from cauri.dashboard.auth import SignedIn, checked_csrf, require
from cauri.dashboard.rendering import DashboardRoute, base_of, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError
from cauri.kit.ids import prefixed
from cauri.merchants.service import merchants
from cauri.models import Payout
from cauri.operators.catalogue import CATALOGUE
from cauri.payouts.schemas import PayoutCreate
from cauri.signin.forms import Form, decimal_field, given, posted
from cauri.signin.route import redirect
from cauri.team import drafts
from cauri.team.roles import Permission

# `external_id`: made when the form is shown, so that a form sent twice (a double click, a
# retry after a timeout) makes one payout, as an API client's retry does.
FIELDS = (
    "destination",
    "phone_number",
    "operator",
    "amount",
    "beneficiary_name",
    "reason",
    "external_id",
)
OWN, THIRD_PARTY = "own", "third_party"
# The Mobile Money modes that pay out, as the form offers them.
OPERATORS = tuple(
    (mode.operator, f"{mode.name} ({mode.country})")
    for mode in CATALOGUE
    if not mode.is_card and mode.country_code is not None
)
DRAFTS_PATH = "/payouts/drafts"
DRAFTS = "/dashboard" + DRAFTS_PATH
DONE = {
    "brouillon": "Transfert en attente : un second membre de l'équipe doit l'approuver.",
    "approuve": "Brouillon approuvé : le transfert est demandé (voir la liste des transferts).",
    "rejete": "Brouillon rejeté : aucun transfert n'est fait.",
    "annule": "Brouillon annulé.",
    "seuil": "Seuil de double validation enregistré.",
}

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Reader = Annotated[SignedIn, Depends(require(Permission.READ))]
Mover = Annotated[SignedIn, Depends(require(Permission.MOVE_MONEY))]
Owner = Annotated[SignedIn, Depends(require(Permission.MANAGE_TEAM))]
CSRF = [Depends(checked_csrf)]


def _request(fields: dict[str, str]) -> dict[str, object]:
    """The API's payout request the form describes (the API then judges it)."""
    third_party = fields.get("destination") == THIRD_PARTY
    return given(
        amount=decimal_field(fields, "amount"),
        external_id=fields.get("external_id") or None,
        beneficiary_name=fields.get("beneficiary_name") or None,
        reason=fields.get("reason") or None,
        phone_number=fields.get("phone_number", "") if third_party else None,
        operator=fields.get("operator", "") if third_party else None,
    )


async def _form(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    form: Form | None = None,
    status: int = 200,
) -> Response:
    merchant = await merchants.get(session, member.merchant_id)
    context = {
        "merchant": merchant,
        "livemode": livemode,
        "form": form
        or Form(
            {name: "" for name in FIELDS} | {"destination": OWN, "external_id": prefixed("dsh")}
        ),
        "operators": OPERATORS,
    }
    return render(request, "dashboard/payout_new.html", context, status)


def _register(mode_path: str, livemode: bool) -> None:
    base = base_of(livemode)

    @router.get(mode_path + "/payouts/new")
    async def new_payout(request: Request, member: Mover, session: SessionDep) -> Response:
        return await _form(request, member, session, livemode)

    @router.post(mode_path + "/payouts/new", dependencies=CSRF)
    async def ask_payout(
        request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        fields = await posted(request)
        form = Form({name: fields.get(name, "") for name in FIELDS})

        async def ask() -> Any:
            body = PayoutCreate.of(_request(fields))
            who = await caller(session, member, livemode)
            return await drafts.ask(session, runtime, actor(member), who, body)

        outcome = await attempt(session, ask)
        if isinstance(outcome, CauriError):
            form.refuse(outcome)
            if outcome.keeps_writes:  # that payout is recorded (failed): a new one is another
                form.values["external_id"] = prefixed("dsh")
            return await _form(request, member, session, livemode, form, outcome.http_status)
        if isinstance(outcome, Payout):
            return redirect(f"{base}/payouts/{outcome.reference}")
        return redirect(f"{DRAFTS}?fait=brouillon")


for _mode_path, _livemode in (("", True), ("/test", False)):
    _register(_mode_path, _livemode)


async def _drafts_page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    refusal: CauriError | None = None,
) -> Response:
    context = {
        "merchant": await merchants.get(session, member.merchant_id),
        "drafts": await drafts.DRAFTS.awaiting(session, member.merchant_id),
        "refusal": refusal,
        "done": None if refusal else DONE.get(request.query_params.get("fait", "")),
    }
    status = refusal.http_status if refusal else 200
    return render(request, "dashboard/drafts.html", context, status)


@router.get(DRAFTS_PATH)
async def drafts_page(request: Request, member: Reader, session: SessionDep) -> Response:
    return await _drafts_page(request, member, session)


async def _decided(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    change: Callable[[], Awaitable[object]],
    done: str,
) -> Response:
    outcome = await attempt(session, change)
    if isinstance(outcome, CauriError):
        return await _drafts_page(request, member, session, outcome)
    return redirect(f"{DRAFTS}?fait={done}")


@router.post(DRAFTS_PATH + "/{reference}/approve", dependencies=CSRF)
async def approve(
    request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    async def approved() -> Payout:
        who = await caller(session, member, livemode=True)
        return await drafts.approve(session, runtime, actor(member), who, reference)

    return await _decided(request, member, session, approved, "approuve")


@router.post(DRAFTS_PATH + "/{reference}/reject", dependencies=CSRF)
async def reject(
    request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    return await _decided(
        request,
        member,
        session,
        lambda: drafts.DRAFTS.reject(
            session, runtime, actor(member), member.merchant_id, reference
        ),
        "rejete",
    )


@router.post(DRAFTS_PATH + "/{reference}/cancel", dependencies=CSRF)
async def cancel(
    request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    return await _decided(
        request,
        member,
        session,
        lambda: drafts.DRAFTS.cancel(
            session, runtime, actor(member), member.merchant_id, reference
        ),
        "annule",
    )


@router.post(DRAFTS_PATH + "/threshold", dependencies=CSRF)
async def set_threshold(
    request: Request, member: Owner, session: SessionDep, runtime: RuntimeDep
) -> Response:
    fields = await posted(request)

    async def changed() -> object:
        amount = decimal_field(fields, "team_approval_above")
        return await drafts.set_threshold(
            session, runtime, actor(member), member.merchant_id, amount
        )

    return await _decided(request, member, session, changed, "seuil")
