"""`cauri payouts batch FILE` and `cauri payouts batch-show REFERENCE`: a merchant's payout
batch on the staff's word (what `POST /payout-batches` does with the merchant's key), from a
CSV file (a header row of `POST /payouts` field names, one payout a row) or a JSON file (the
items, or the request's whole body), and the batch read back with its items."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli.acting import AsOption, TotpOption, acting, held
from cauri.cli.common import in_transaction, livemode_of
from cauri.cli.output import JsonFlag, echo_record, echo_table

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.models import PayoutBatch
    from cauri.runtime import Runtime


def _read_file(path: Path) -> tuple[str | None, list[Any], bytes]:
    """The file's external_id (a JSON body may name one), its items and its bytes."""
    from cauri.kit.errors import CauriError
    from cauri.payout_batches import files

    try:
        raw = path.read_bytes()
        named, items = files.read_batch(raw, path.name)
    except OSError as error:
        raise typer.BadParameter(str(error), param_hint="FILE") from None
    except CauriError as error:
        raise typer.BadParameter(error.message, param_hint="FILE") from None
    return named, items, raw


def _shown(batch: PayoutBatch, body: dict[str, Any]) -> dict[str, Any]:
    return {"merchant_id": batch.merchant_id, **body}


async def _batch_row(session: AsyncSession, batch: PayoutBatch) -> dict[str, Any]:
    from cauri.payout_batches.schemas import batch_object
    from cauri.payout_batches.service import payout_batches

    items, counts = await payout_batches.items(session, batch.reference)
    return _shown(batch, batch_object(batch, counts, items))


def _echo_batch(row: dict[str, Any], as_json: bool) -> None:
    if as_json or "pending_approval" in row:
        echo_record(row, as_json)
        return
    items = row["items"]
    echo_record({key: value for key, value in row.items() if key != "items"}, as_json=False)
    refused = [
        {"position": position, **item, "code": item["error"]["code"]}
        for position, item in enumerate(items)
        if item["error"] is not None
    ]
    if refused:
        typer.echo("refused items:")
        echo_table(refused, ("position", "external_id", "code"), indent="  ")


def payouts_batch(
    file: Annotated[
        Path, typer.Argument(help="A .csv (header: POST /payouts fields) or .json file.")
    ],
    merchant: Annotated[str, typer.Option(help="The merchant whose balance pays (its id).")],
    mode: Annotated[str, typer.Option(help="test or live.")] = "test",
    external_id: Annotated[
        str | None,
        typer.Option(
            help="The batch's; default: the JSON body's, else one derived from the file's "
            "bytes, so that the same file sent twice is one batch."
        ),
    ] = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Up to 1,000 payouts from a merchant's balance, as `POST /payout-batches` makes them:
    each item its own payout with every rule of the API (caps, approval, balance), made in
    order by the worker; a refused item is reported with its error. Audited. Live, above
    the platform's `payout-dual-approval-above` in all, it is only asked: a second person
    approves it (`cauri approvals approve`); each names its staff account (--as, --totp)."""
    from cauri.payout_batches import files

    livemode = livemode_of(mode)
    named, items, raw = _read_file(file)
    chosen = external_id or named or files.named_by_bytes(raw)

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        from cauri.models import MoneyApproval
        from cauri.payout_batches.schemas import PayoutBatchCreate
        from cauri.staff import actions

        body = PayoutBatchCreate.of({"external_id": chosen, "items": items})
        actor = await acting(session, runtime, as_email, totp_code)
        made = await actions.create_payout_batch(
            session, runtime, actor, merchant, livemode=livemode, body=body
        )
        if isinstance(made, MoneyApproval):
            return held(made)
        batch, created = made
        return await _batch_row(session, batch) | {"replayed": not created}

    _echo_batch(in_transaction(work), as_json)


def payouts_batch_show(reference: str, as_json: JsonFlag = False) -> None:
    """A payout batch of any merchant, with its items in order and its counts."""

    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        from cauri.kit.errors import NotFound
        from cauri.models import PayoutBatch

        batch = await session.get(PayoutBatch, reference)
        if batch is None:
            raise NotFound(f"Lot de transferts introuvable : {reference}.")
        return await _batch_row(session, batch)

    _echo_batch(in_transaction(work), as_json)


def payouts_batch_resume(reference: str) -> None:
    """Queues a processing batch's job again, when it gave up (its items already made are
    found again, never made twice). Audited."""

    async def work(session: AsyncSession, runtime: Runtime) -> str:
        from cauri.staff import actions

        await actions.resume_payout_batch(session, runtime, Actor.cli(), reference)
        return f"{reference}: queued again; the worker makes what is left of it"

    typer.echo(in_transaction(work))
