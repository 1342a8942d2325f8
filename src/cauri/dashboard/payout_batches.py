"""Bulk payouts from the dashboard (« Transferts groupés », issue 28): a CSV file uploaded in
each environment (its columns explained on the page, an example to download), made into a
payout batch as `POST /payout-batches` makes it; the merchant's batches, newest first; a
batch with its items, each linked to its payout or showing why it was refused. Live, a file
whose items add up above the owner's threshold waits as a draft for a second member's
approval (its own page, with the file's items). cauri.team.batch_drafts decides; this module
reads forms and shows pages. Members who move money upload and decide; every member reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import UploadFile

from cauri.audit.actor import Actor
from cauri.dashboard.acting import actor, caller
from cauri.dashboard.auth import SignedIn, checked_csrf, require
from cauri.dashboard.payouts import OPERATORS
from cauri.dashboard.rendering import DashboardRoute, base_of, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest, NotFound
from cauri.merchants.caller import Caller
from cauri.merchants.service import merchants
from cauri.models import PayoutBatch, PayoutBatchDraft
from cauri.payout_batches import files
from cauri.payout_batches.schemas import MAX_ITEMS
from cauri.payout_batches.service import payout_batches
from cauri.runtime import Runtime
from cauri.signin.forms import Form, pager
from cauri.signin.route import redirect
from cauri.team import batch_drafts
from cauri.team.roles import Permission, allows

PATH = "/payout-batches"
DRAFTS_PATH = f"{PATH}/drafts"
DRAFTS = "/dashboard" + DRAFTS_PATH
EXAMPLE_PATH = f"{PATH}/example.csv"
# The upload's addresses, given the batches' body limit (cauri.kit.body_limit).
UPLOADS = tuple(base_of(livemode) + PATH for livemode in (True, False))
FILE_FIELD = "file"
PER_PAGE = 25
DONE = {
    "envoye": "Fichier reçu : les transferts partent dans l'ordre du fichier.",
    "deja": "Ce fichier a déjà été envoyé : voici son lot, rien n'est payé deux fois.",
    "brouillon": "Transferts en attente : un second membre de l'équipe doit les approuver.",
    "approuve": "Transferts approuvés : ils partent dans l'ordre du fichier.",
    "rejete": "Transferts rejetés : aucun n'est fait.",
    "annule": "Transferts annulés.",
}
EXAMPLE_CSV = (
    "external_id,amount,operator,phone_number,beneficiary_name,reason\r\n"
    "salaire-2026-11-001,50000,mtn,22997000000,Koffi Mensah,Salaire de novembre\r\n"
    "salaire-2026-11-002,45000,orange_ci,2250700000000,Awa Traoré,Salaire de novembre\r\n"
    "avance-2026-11-003,10000,,,,Vers votre compte de transfert validé\r\n"
)

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Reader = Annotated[SignedIn, Depends(require(Permission.READ))]
Mover = Annotated[SignedIn, Depends(require(Permission.MOVE_MONEY))]
CSRF = [Depends(checked_csrf)]
Decision = Callable[[AsyncSession, Runtime, Actor, str, str], Awaitable[object]]


@router.get(EXAMPLE_PATH)
async def example(member: Reader) -> Response:
    headers = {"Content-Disposition": 'attachment; filename="transferts-exemple.csv"'}
    # With its byte order mark: Excel then reads it as UTF-8 (the reader skips it).
    data = EXAMPLE_CSV.encode("utf-8-sig")
    return Response(data, media_type="text/csv; charset=utf-8", headers=headers)


async def _list_page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    form: Form | None = None,
    status: int = 200,
) -> Response:
    page = Form.read(request, ("page",)).page(PER_PAGE)
    yours = Caller(member.merchant_id, livemode)
    batches, total = await payout_batches.list(session, yours, page, None)
    counts = await payout_batches.counts(session, [batch.reference for batch in batches])
    awaiting = await batch_drafts.DRAFTS.awaiting(session, member.merchant_id) if livemode else []
    context = {
        "merchant": await merchants.get(session, member.merchant_id),
        "livemode": livemode,
        "rows": [(batch, counts[batch.reference]) for batch in batches],
        "pager": pager(request, page, total),
        "drafts": awaiting,
        "form": form or Form({FILE_FIELD: ""}),
        "may_upload": allows(member.role, Permission.MOVE_MONEY),
        "operators": OPERATORS,
        "max_items": MAX_ITEMS,
        "example": "/dashboard" + EXAMPLE_PATH,
        "done": DONE.get(request.query_params.get("fait", "")),
    }
    return render(request, "dashboard/payout_batches.html", context, status)


async def _uploaded(request: Request) -> tuple[str, bytes]:
    """The file sent (its name and bytes), or a refusal naming the file's field."""
    sent = (await request.form()).get(FILE_FIELD)
    if not isinstance(sent, UploadFile) or not sent.filename:
        raise InvalidRequest.field(FILE_FIELD, "Choisissez un fichier CSV.")
    raw = await sent.read()  # at most the batches' body limit (cauri.kit.body_limit)
    if not raw.strip():
        raise InvalidRequest.field(FILE_FIELD, "Le fichier est vide.")
    return sent.filename, raw


def _register(mode_path: str, livemode: bool) -> None:
    here = base_of(livemode) + PATH

    @router.get(mode_path + PATH)
    async def batches_page(request: Request, member: Reader, session: SessionDep) -> Response:
        return await _list_page(request, member, session, livemode)

    @router.post(mode_path + PATH, dependencies=CSRF)
    async def upload(
        request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        async def sent() -> Any:
            file_name, raw = await _uploaded(request)
            who = await caller(session, member, livemode)
            return await batch_drafts.ask(session, runtime, actor(member), who, file_name, raw)

        outcome = await attempt(session, sent)
        if isinstance(outcome, CauriError):
            form = Form({FILE_FIELD: ""})
            # The batch's own refusals (no item, too many) are the file's.
            form.refuse(outcome, renamed={"items": FILE_FIELD})
            return await _list_page(request, member, session, livemode, form, outcome.http_status)
        if isinstance(outcome, tuple):
            batch, created = outcome
            return redirect(f"{here}/{batch.reference}?fait={'envoye' if created else 'deja'}")
        return redirect(f"{DRAFTS}/{outcome.reference}?fait=brouillon")

    @router.get(mode_path + PATH + "/{reference}")
    async def batch_page(
        request: Request, member: Reader, session: SessionDep, reference: str
    ) -> Response:
        found: PayoutBatch = await payout_batches.get(
            session, Caller(member.merchant_id, livemode), reference
        )
        items, counts = await payout_batches.items(session, found.reference)
        context = {
            "livemode": livemode,
            "batch": found,
            "items": items,
            "counts": counts,
            "done": DONE.get(request.query_params.get("fait", "")),
        }
        return render(request, "dashboard/payout_batch.html", context)


for _mode_path, _livemode in (("", True), ("/test", False)):
    _register(_mode_path, _livemode)


async def _draft_page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    reference: str,
    refusal: CauriError | None = None,
) -> Response:
    draft = await session.get(PayoutBatchDraft, reference)
    if draft is None or draft.merchant_id != member.merchant_id:
        raise NotFound(f"{batch_drafts.DRAFTS.missing} : {reference}.")
    context = {
        "merchant": await merchants.get(session, member.merchant_id),
        "draft": draft,
        "items": files.csv_items(draft.file_text),
        "refusal": refusal,
        "done": None if refusal else DONE.get(request.query_params.get("fait", "")),
    }
    status = refusal.http_status if refusal else 200
    return render(request, "dashboard/payout_batch_draft.html", context, status)


@router.get(DRAFTS_PATH + "/{reference}")
async def draft_page(
    request: Request, member: Reader, session: SessionDep, reference: str
) -> Response:
    return await _draft_page(request, member, session, reference)


async def _decided(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    reference: str,
    change: Callable[[], Awaitable[object]],
    done: str,
) -> Response:
    outcome = await attempt(session, change)
    if isinstance(outcome, CauriError):
        return await _draft_page(request, member, session, reference, outcome)
    if isinstance(outcome, PayoutBatch):
        return redirect(f"/dashboard{PATH}/{outcome.reference}?fait={done}")
    return redirect(f"{DRAFTS}/{reference}?fait={done}")


@router.post(DRAFTS_PATH + "/{reference}/approve", dependencies=CSRF)
async def approve(
    request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
) -> Response:
    async def approved() -> PayoutBatch:
        who = await caller(session, member, livemode=True)
        return await batch_drafts.approve(session, runtime, actor(member), who, reference)

    return await _decided(request, member, session, reference, approved, "approuve")


def _register_decision(action: str, decide: Decision, done: str) -> None:
    """A decision that only changes the draft's state (its rejection, its cancellation)."""

    @router.post(DRAFTS_PATH + "/{reference}/" + action, dependencies=CSRF)
    async def decided(
        request: Request, member: Mover, session: SessionDep, runtime: RuntimeDep, reference: str
    ) -> Response:
        async def change() -> object:
            return await decide(session, runtime, actor(member), member.merchant_id, reference)

        return await _decided(request, member, session, reference, change, done)


_register_decision("reject", batch_drafts.DRAFTS.reject, "rejete")
_register_decision("cancel", batch_drafts.DRAFTS.cancel, "annule")
