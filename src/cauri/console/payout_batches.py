"""Payout batches across merchants (issue 28): the newest first, and one batch with its items
in order, each linked to its payout or showing why it was refused. Finance sends one for a
merchant from a CSV or JSON file, as `cauri payouts batch` does (cauri.staff.actions: live,
above the platform's dual-approval amount in all, it is only asked of a second person)."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import UploadFile

from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest, NotFound
from cauri.models import MoneyApproval, PayoutBatch
from cauri.payout_batches import files
from cauri.payout_batches.schemas import PayoutBatchCreate
from cauri.payout_batches.service import payout_batches
from cauri.staff import actions
from cauri.staff.roles import Permission

PATH = "/payout-batches"
SHOWN = 50

pages = Pages()


async def _listed(
    request: Request, session: AsyncSession, refusal: CauriError | None = None
) -> Response:
    rows = (
        await session.scalars(
            select(PayoutBatch).order_by(PayoutBatch.created_at.desc()).limit(SHOWN)
        )
    ).all()
    counts = await payout_batches.counts(session, [row.reference for row in rows])
    context = {
        "rows": [(row, counts[row.reference]) for row in rows],
        "shown": SHOWN,
        "refusal": refusal,
        "asked": request.query_params.get("demande") is not None,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "console/payout_batches.html", context, status)


@pages.get(PATH, Permission.READ, menu="Lots de transferts")
async def batches(request: Request, staff: Staff, session: SessionDep) -> Response:
    return await _listed(request, session)


@pages.post(PATH, permission(actions.CREATE_PAYOUT_BATCH))
async def send(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    form = await request.form()
    sent = form.get("file")

    async def made() -> tuple[PayoutBatch, bool] | MoneyApproval:
        if not isinstance(sent, UploadFile) or not sent.filename:
            raise InvalidRequest.field("file", "Choisissez un fichier CSV ou JSON.")
        raw = await sent.read()
        named, items = files.read_batch(raw, sent.filename)
        body = PayoutBatchCreate.of(
            {"external_id": named or files.named_by_bytes(raw), "items": items}
        )
        return await actions.create_payout_batch(
            session,
            runtime,
            actor(staff),
            str(form.get("merchant") or "").strip(),
            livemode=form.get("mode") == "live",
            body=body,
        )

    outcome = await attempt(session, made)
    if isinstance(outcome, CauriError):
        return await _listed(request, session, outcome)
    if isinstance(outcome, MoneyApproval):
        return redirect(f"{PREFIX}{PATH}?demande=1")
    batch, _ = outcome
    return redirect(f"{PREFIX}{PATH}/{batch.reference}")


@pages.get(PATH + "/{reference}", Permission.READ)
async def batch(request: Request, staff: Staff, session: SessionDep, reference: str) -> Response:
    found = await session.get(PayoutBatch, reference)
    if found is None:
        raise NotFound(f"Lot de transferts introuvable : {reference}.")
    items, counts = await payout_batches.items(session, reference)
    context = {"batch": found, "items": items, "counts": counts}
    return render(request, "console/payout_batch.html", context)
