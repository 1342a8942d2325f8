"""`cauri audit list`, `cauri audit export` and `cauri audit verify`: who did what, when, to
which resource, as the staff console and the CLI recorded it (cauri.audit), and whether the
log is still as written (cauri.audit.chain)."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit import chain
from cauri.audit.actor import Actor
from cauri.audit.chain import Verdict
from cauri.audit.export import csv_lines
from cauri.audit.log import AuditFilter, entry_row, search
from cauri.cli.common import in_transaction
from cauri.cli.output import JsonFlag, echo_json
from cauri.kit.db import unit_of_work
from cauri.kit.pagination import Page
from cauri.kit.period import Period
from cauri.staff import actions

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


audit_cli = typer.Typer(no_args_is_help=True, help="The audit log of staff and CLI actions.")

ActorOption = Annotated[
    str | None, typer.Option(help="Only this actor's: a staff email, or cli:USER.")
]
ActionOption = Annotated[
    str | None, typer.Option(help="Only this action: merchant.set_status, payout.approve, …")
]
ResourceOption = Annotated[
    str | None,
    typer.Option(help="Only this resource: TYPE (merchant, payout, …) or TYPE:ID."),
]
FromOption = Annotated[
    str | None, typer.Option("--from", help="From: an ISO 8601 date or timestamp.")
]
ToOption = Annotated[
    str | None, typer.Option("--to", help="Until: an ISO 8601 date (included) or timestamp.")
]


def _wanted(
    actor: str | None,
    action: str | None,
    resource: str | None,
    start: str | None,
    end: str | None,
) -> AuditFilter:
    resource_type, _, resource_id = (resource or "").partition(":")
    return AuditFilter(
        actor=actor,
        action=action,
        resource_type=resource_type or None,
        resource_id=resource_id or None,
        # Parsed in the transaction's work: a bad date is the API's error envelope.
        period=Period.parse(start, end),
    )


@audit_cli.command("list")
def audit_list(
    actor: ActorOption = None,
    action: ActionOption = None,
    resource: ResourceOption = None,
    start: FromOption = None,
    end: ToOption = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50,
    page: Annotated[int, typer.Option(min=1, help="Which page of --limit entries.")] = 1,
    as_json: JsonFlag = False,
) -> None:
    """The entries, newest first: who, when, what, on which resource, what changed."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        wanted = _wanted(actor, action, resource, start, end)
        entries, _total = await search(session, wanted, Page(page, limit))
        return [entry_row(entry) for entry in entries]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo("no audit entry")
    for row in rows:
        typer.echo(
            f"{row['at']}  {row['actor_name']}  {row['action']}  "
            f"{row['resource_type']}:{row['resource_id']}"
        )
        if row["reason"]:
            typer.echo(f"  reason: {row['reason']}")
        for line in _changes(row["before"], row["after"]):
            typer.echo(f"  {line}")


def _changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """`field: before -> after` for each field that changed (`-`: absent)."""
    old, new = before or {}, after or {}
    return [
        f"{field}: {_shown(old.get(field))} -> {_shown(new.get(field))}"
        for field in dict.fromkeys([*old, *new])
        if old.get(field) != new.get(field)
    ]


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@audit_cli.command("export")
def audit_export(
    start: FromOption = None,
    end: ToOption = None,
    actor: ActorOption = None,
    action: ActionOption = None,
    resource: ResourceOption = None,
) -> None:
    """The entries of the period as CSV on stdout, oldest first, written as they are read;
    `before` and `after` as JSON."""

    async def work(session: AsyncSession, runtime: Runtime) -> None:
        wanted = _wanted(actor, action, resource, start, end)
        # Recorded in a transaction of its own, as the console does: the entry holds the
        # chain until its transaction ends (cauri.audit.chain), not while the file is written.
        async with unit_of_work(runtime.sessionmaker) as recording:
            await actions.record_export(
                recording, runtime, Actor.cli(), actions.EXPORT_AUDIT, "audit_log", wanted
            )
        async for line in csv_lines(session, wanted):
            typer.echo(line, nl=False)

    in_transaction(work)


@audit_cli.command("verify")
def audit_verify(
    anchor: Annotated[
        list[str] | None,
        typer.Option(
            help="A chain_hash kept elsewhere (an export's): check it is still in the chain. "
            "Repeatable."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Walks the whole log recomputing each entry's hash from its predecessor's: prints the
    number of entries and the head's hash; exit 1, naming the first broken entry, if an
    entry was changed, deleted or inserted, or if an anchor is not in the chain."""

    async def work(session: AsyncSession, _: Runtime) -> Verdict:
        return await chain.verify(session, [hash_.strip().lower() for hash_ in anchor or ()])

    verdict = in_transaction(work)
    result = {
        "intact": verdict.intact,
        "entries": verdict.entries,
        "head": {"id": verdict.head_id, "hash": verdict.head_hash},
        "broken": None if verdict.broken is None else dataclasses.asdict(verdict.broken),
        "anchors": [{"hash": h, "entry_id": found} for h, found in verdict.anchors.items()],
    }
    if as_json:
        echo_json(result)
    else:
        typer.echo(
            f"audit log {'intact' if verdict.intact else 'BROKEN'}: "
            f"{verdict.entries} entries, head {verdict.head_hash}"
            + ("" if verdict.head_id is None else f" (entry {verdict.head_id})")
        )
        if verdict.broken is not None:
            typer.echo(f"first broken entry: {verdict.broken.entry_id}: {verdict.broken.problem}")
        for hash_, found in verdict.anchors.items():
            typer.echo(
                f"anchor {hash_}: " + ("NOT in the chain" if found is None else f"entry {found}")
            )
    if not verdict.intact:
        raise typer.Exit(1)
