"""Payout batches across merchants (issue 28): the newest first, and one batch with its items
in order, each linked to its payout or showing why it was refused. Read-only: batches are
sent by merchants' keys or by the staff's CLI (`cauri payouts batch`)."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy import select

from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import render
from cauri.http import SessionDep
from cauri.kit.errors import NotFound
from cauri.models import PayoutBatch
from cauri.payout_batches.service import payout_batches
from cauri.staff.roles import Permission

PATH = "/payout-batches"
SHOWN = 50

pages = Pages()


@pages.get(PATH, Permission.READ, menu="Lots de transferts")
async def batches(request: Request, staff: Staff, session: SessionDep) -> Response:
    rows = (
        await session.scalars(
            select(PayoutBatch).order_by(PayoutBatch.created_at.desc()).limit(SHOWN)
        )
    ).all()
    counts = await payout_batches.counts(session, [row.reference for row in rows])
    context = {"rows": [(row, counts[row.reference]) for row in rows], "shown": SHOWN}
    return render(request, "console/payout_batches.html", context)


@pages.get(PATH + "/{reference}", Permission.READ)
async def batch(request: Request, staff: Staff, session: SessionDep, reference: str) -> Response:
    found = await session.get(PayoutBatch, reference)
    if found is None:
        raise NotFound(f"Lot de transferts introuvable : {reference}.")
    items, counts = await payout_batches.items(session, reference)
    context = {"batch": found, "items": items, "counts": counts}
    return render(request, "console/payout_batch.html", context)
