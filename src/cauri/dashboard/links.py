"""The payment links of each environment (issue 25's, as the API makes them): made from a
form (a fixed amount, or one the customer types within bounds; reusable or for one payment),
listed with their address, QR code and uses, deactivated; each change audited with the
member as actor. Owners and finance make and deactivate them; every member sees them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.checkout.links import payment_links
from cauri.checkout.schemas import LinkFilters
from cauri.dashboard.acting import actor, caller
from cauri.dashboard.auth import SignedIn, checked_csrf, require
from cauri.dashboard.rendering import DashboardRoute, base_of, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError
from cauri.merchants.caller import Caller
from cauri.payments.endpoints import public_base_url
from cauri.signin.forms import Form, decimal_field, given, pager, posted
from cauri.signin.route import redirect
from cauri.team import actions
from cauri.team.roles import Permission, allows

FIELDS = ("description", "amount", "min_amount", "max_amount", "currency", "reusable", "max_uses")
CURRENCIES = (("XOF", "XOF"), ("XAF", "XAF"))
PER_PAGE = 25
DONE = {"cree": "Lien créé : partagez son adresse ou son code QR.", "desactive": "Lien désactivé."}

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Reader = Annotated[SignedIn, Depends(require(Permission.READ))]
Mover = Annotated[SignedIn, Depends(require(Permission.MOVE_MONEY))]
CSRF = [Depends(checked_csrf)]


def _body(fields: dict[str, str]) -> dict[str, object]:
    """The API's request the form describes: an unchecked box is a link for one payment."""
    return given(
        description=fields.get("description", ""),
        amount=decimal_field(fields, "amount"),
        min_amount=decimal_field(fields, "min_amount"),
        max_amount=decimal_field(fields, "max_amount"),
        currency=fields.get("currency") or None,
        reusable=fields.get("reusable") == "on",
        max_uses=fields.get("max_uses") or None,
    )


async def _page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    form: Form | None = None,
    refusal: CauriError | None = None,
) -> Response:
    listing = Form.read(request, ("page",))
    page = listing.page(PER_PAGE)
    yours = Caller(member.merchant_id, livemode)
    links, total = await payment_links.list(session, yours, page, LinkFilters())
    context = {
        "livemode": livemode,
        "links": links,
        "pager": pager(request, page, total),
        "form": form or Form({name: "" for name in FIELDS} | {"reusable": "on"}),
        "currencies": CURRENCIES,
        "may_change": allows(member.role, Permission.MOVE_MONEY),
        "refusal": refusal,
        "done": None if refusal else DONE.get(request.query_params.get("fait", "")),
    }
    return render(request, "dashboard/links.html", context, refusal.http_status if refusal else 200)


def _register(mode_path: str, livemode: bool) -> None:
    here = base_of(livemode) + "/links"

    @router.get(mode_path + "/links")
    async def links_page(request: Request, member: Reader, session: SessionDep) -> Response:
        return await _page(request, member, session, livemode)

    @router.post(mode_path + "/links", dependencies=CSRF)
    async def create(
        request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        fields = await posted(request)
        form = Form({name: fields.get(name, "") for name in FIELDS})
        base_url = public_base_url(request, runtime)

        async def made() -> object:
            who = await caller(session, member, livemode)
            return await actions.create_link(
                session, runtime, actor(member), who, _body(fields), base_url
            )

        outcome = await attempt(session, made)
        if isinstance(outcome, CauriError):
            form.refuse(outcome)
            return await _page(request, member, session, livemode, form, outcome)
        return redirect(f"{here}?fait=cree")

    @router.post(mode_path + "/links/{reference}/deactivate", dependencies=CSRF)
    async def deactivate(
        request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
    ) -> Response:
        async def done() -> object:
            who = await caller(session, member, livemode)
            return await actions.deactivate_link(session, runtime, actor(member), who, reference)

        outcome = await attempt(session, done)
        if isinstance(outcome, CauriError):
            return await _page(request, member, session, livemode, refusal=outcome)
        return redirect(f"{here}?fait=desactive")


for _mode_path, _livemode in (("", True), ("/test", False)):
    _register(_mode_path, _livemode)
