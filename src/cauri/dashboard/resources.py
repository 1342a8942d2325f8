"""A merchant's payments, plans, payouts and refunds (cauri.staff.kinds), in each
environment: a search page for each kind (by reference, external_id, the last digits of the
number, status, period) and each one's page with its whole story. Only the member's
merchant's rows of the environment shown: another merchant's reference, or the other
environment's, is a 404 page like an unknown one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.dashboard.acting import actor, caller
from cauri.dashboard.auth import SignedIn, checked_csrf, require
from cauri.dashboard.rendering import DashboardRoute, base_of, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, NotFound
from cauri.models import Refund
from cauri.signin.forms import Form, decimal_field, given, posted
from cauri.signin.route import redirect
from cauri.staff.kinds import KINDS, Kind, look_up
from cauri.staff.search import SearchFilter
from cauri.team import actions
from cauri.team.roles import Permission, allows

FIELDS = ("reference", "external_id", "phone_digits", "status", "from", "to", "page")
# The environments, as the addresses say them (rendering.base_of).
MODES = (("", True), ("/test", False))

# The outcome of an action, said on the page it leads back to (`?fait=`).
DONE = {"rembourse": "Remboursement demandé : son statut s'affiche ci-dessous."}
PAYMENTS = next(kind for kind in KINDS if kind.path == "/payments")

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Reader = Annotated[SignedIn, Depends(require(Permission.READ))]
Mover = Annotated[SignedIn, Depends(require(Permission.MOVE_MONEY))]


async def _search(
    request: Request, member: SignedIn, session: AsyncSession, kind: Kind, livemode: bool
) -> Response:
    """Every row of the environment while no filter is given, newest first; a refused
    filter: the form again with its message next to the field (422)."""
    form = Form.read(request, FIELDS)
    wanted = SearchFilter(
        reference=form.optional("reference"),
        external_id=form.optional("external_id"),
        merchant_id=member.merchant_id,
        phone_digits=form.optional("phone_digits"),
        status=form.optional("status"),
        livemode=livemode,
        period=form.period(),
    )
    found = await look_up(request, session, kind, form, wanted)
    context = {
        "kind": kind,
        "form": form,
        "rows": found.rows,
        "pager": found.pager,
        "livemode": livemode,
        # The team's own customers: any member may find one by the end of the number.
        "may_look_up": True,
    }
    return render(request, "dashboard/search.html", context, 422 if form.errors else 200)


async def _detail(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    kind: Kind,
    livemode: bool,
    reference: str,
    refusal: CauriError | None = None,
) -> Response:
    try:
        found = await kind.detail(session, reference)
    except NotFound:
        found = None
    subject = None if found is None else kind.subject(found)
    if subject is None or (subject.merchant_id, subject.livemode) != (
        member.merchant_id,
        livemode,
    ):
        raise NotFound(f"{kind.one} introuvable : {reference}.")
    context = {
        "kind": kind,
        "detail": found,
        "livemode": livemode,
        "may_move_money": allows(member.role, Permission.MOVE_MONEY),
        "refusal": refusal,
        "done": DONE.get(request.query_params.get("fait", "")),
    }
    status = refusal.http_status if refusal else 200
    return render(request, f"dashboard/{kind.name}.html", context, status)


def _register_refund(mode_path: str, livemode: bool) -> None:
    @router.post(mode_path + "/payments/{reference}/refund", dependencies=[Depends(checked_csrf)])
    async def refund_payment(
        request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
    ) -> Response:
        """As the API's refund, from the payment's page: its rules, its refusals (the page
        again, saying why, nothing written)."""
        fields = await posted(request)

        async def refund() -> Refund:
            return await actions.refund(
                session,
                runtime,
                actor(member),
                await caller(session, member, livemode),
                reference,
                given(amount=decimal_field(fields, "amount"), reason=fields.get("reason") or None),
            )

        outcome = await attempt(session, refund)
        if isinstance(outcome, CauriError):
            return await _detail(request, member, session, PAYMENTS, livemode, reference, outcome)
        return redirect(f"{base_of(livemode)}/payments/{reference}?fait=rembourse")


def _register(kind: Kind, mode_path: str, livemode: bool) -> None:
    @router.get(mode_path + kind.path)
    async def search_page(request: Request, member: Reader, session: SessionDep) -> Response:
        return await _search(request, member, session, kind, livemode)

    @router.get(mode_path + kind.path + "/{reference}")
    async def detail_page(
        request: Request, member: Reader, session: SessionDep, reference: str
    ) -> Response:
        return await _detail(request, member, session, kind, livemode, reference)


for _mode_path, _livemode in MODES:
    for _kind in KINDS:
        _register(_kind, _mode_path, _livemode)
    _register_refund(_mode_path, _livemode)
