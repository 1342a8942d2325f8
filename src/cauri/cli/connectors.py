"""`cauri connectors …`, `cauri routes …`, `cauri exchanges list`: live money's connectors,
configured by the platform's staff. What they change lives in the database; running servers
use it at their next resolution. No secret is ever printed: secrets are read from files (or
stdin), never from the command line, and only their names are shown."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Annotated, Any

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.cli.common import in_transaction, livemode_of, resolved_url
from cauri.cli.operations import echo_operations, operation_row
from cauri.cli.output import JsonFlag, echo_json
from cauri.config import get_settings
from cauri.connectors import history
from cauri.connectors.errors import ConnectorError
from cauri.connectors.service import AccountDefinition, AccountView, callback_url, connectors
from cauri.operators.config import ACTIONS
from cauri.operators.protocol import Outcome
from cauri.runtime import Runtime
from cauri.staff import actions, reads

connectors_cli = typer.Typer(no_args_is_help=True, help="Connector accounts (live money).")
routes_cli = typer.Typer(
    no_args_is_help=True, help="Which connector carries each operator's operations (live)."
)
exchanges_cli = typer.Typer(no_args_is_help=True, help="What was exchanged with operators.")


def _fail(error: ConnectorError) -> typer.Exit:
    typer.echo(json.dumps(error.envelope(), ensure_ascii=False), err=True)
    return typer.Exit(1)


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        key = key.strip()
        if not sep or not key:
            raise typer.BadParameter(f"NAME=VALUE, not {value!r}", param_hint=option)
        if key in pairs:
            raise typer.BadParameter(f"{key} given twice", param_hint=option)
        pairs[key] = rest
    return pairs


def _read_secrets(values: list[str]) -> dict[str, str]:
    """NAME=@FILE (the file's content, without its final line break) or NAME=@- (stdin).
    Never the value itself: it would sit in the shell's history and the process list."""
    secrets: dict[str, str] = {}
    stdin_used = False
    for value in values:
        name, sep, source = value.partition("=")
        name = name.strip()
        if not sep or not name:
            raise typer.BadParameter("NAME=@FILE or NAME=@-", param_hint="--secret")
        if name in secrets:
            raise typer.BadParameter(f"{name} given twice", param_hint="--secret")
        if not source.startswith("@"):
            # The value is not repeated here: it is a secret.
            raise typer.BadParameter(
                f"{name}: a secret is never given on the command line (it would stay in the "
                f"shell history); write it to a file and pass {name}=@FILE, or {name}=@- to "
                "read it from stdin",
                param_hint="--secret",
            )
        path = source[1:]
        if path == "-":
            if stdin_used:
                raise typer.BadParameter("only one secret can be read from stdin (@-)")
            stdin_used = True
            content = sys.stdin.read()
        else:
            try:
                content = Path(path).read_text()
            except OSError as exc:
                raise typer.BadParameter(
                    f"{name}: cannot read {path}: {exc.strerror}", param_hint="--secret"
                ) from None
        content = content.removesuffix("\n").removesuffix("\r")
        if not content:
            raise typer.BadParameter(f"{name}: the secret is empty", param_hint="--secret")
        secrets[name] = content
    return secrets


def account_row(view: AccountView, public_url: str | None) -> dict[str, Any]:
    """What `connectors list` shows of an account: never a secret's value."""
    account = view.account
    return {
        "name": account.name,
        "kind": account.kind,
        "environment": account.environment,
        "base_url": account.base_url,
        "settings": dict(account.settings),
        "secret_names": list(account.secret_names),
        "routes": [{"operator": op, "action": action} for op, action in view.routes],
        "callback_url": callback_url(public_url, account.name),
        "last_check": None
        if account.checked_at is None
        else {
            "at": account.checked_at.isoformat(),
            "ok": account.check_ok,
            "detail": account.check_detail,
            "facts": account.check_facts or {},
        },
        "created_at": account.created_at.isoformat(),
        "updated_at": account.updated_at.isoformat(),
    }


@connectors_cli.command("add")
def connectors_add(
    name: str,
    kind: Annotated[str, typer.Option(help="mtn_momo, …")],
    environment: Annotated[str, typer.Option(help="sandbox or production")],
    base_url: Annotated[str, typer.Option(help="The operator API's base URL.")],
    setting: Annotated[
        list[str] | None, typer.Option("--setting", help="NAME=VALUE; repeat.")
    ] = None,
    secret: Annotated[
        list[str] | None,
        typer.Option("--secret", help="NAME=@FILE, or NAME=@- for stdin; repeat."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Adds a connector account, or replaces the one of that name (its routes are kept)."""
    settings = _pairs(setting or [], "--setting")
    secrets = _read_secrets(secret or [])

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        replaced = await actions.add_connector(
            session,
            runtime,
            Actor.cli(),
            AccountDefinition(name, kind, environment, base_url, settings, secrets),
        )
        views = [v for v in await connectors.accounts(session) if v.account.name == name]
        return account_row(views[0], runtime.settings.public_url) | {"replaced": replaced}

    row = in_transaction(work)
    if as_json:
        echo_json(row)
        return
    verb = "replaced" if row["replaced"] else "added"
    typer.echo(f"connector {row['name']} {verb} ({row['kind']}, {row['environment']})")
    if row["callback_url"]:
        typer.echo(f"callback_url: {row['callback_url']}")


@connectors_cli.command("list")
def connectors_list(as_json: JsonFlag = False) -> None:
    """Every connector account, with the routes it carries; secrets by name only."""

    async def work(session: AsyncSession, runtime: Runtime) -> list[dict[str, Any]]:
        public_url = runtime.settings.public_url
        return [account_row(view, public_url) for view in await connectors.accounts(session)]

    rows: list[dict[str, Any]] = in_transaction(work)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo("no connector account (cauri connectors add NAME …)")
    for row in rows:
        typer.echo(f"{row['name']}  {row['kind']}  {row['environment']}  {row['base_url']}")
        settings = ", ".join(f"{k}={v}" for k, v in row["settings"].items()) or "-"
        typer.echo(f"  settings: {settings}")
        typer.echo(f"  secrets: {', '.join(row['secret_names']) or '-'}")
        routes = ", ".join(f"{r['operator']} {r['action']}" for r in row["routes"]) or "-"
        typer.echo(f"  routes: {routes}")
        typer.echo(f"  callback_url: {row['callback_url'] or '- (CAURI_PUBLIC_URL is not set)'}")
        typer.echo(f"  updated_at: {row['updated_at']}")
        check = row["last_check"]
        if check is None:
            typer.echo(f"  last check: never (cauri connectors check {row['name']})")
            continue
        verdict = "ok" if check["ok"] else "NOT OK"
        typer.echo(f"  last check: {verdict} at {check['at']}: {check['detail']}")
        _echo_facts(check["facts"], "    ")


def _echo_facts(facts: dict[str, Any], indent: str) -> None:
    for key, value in facts.items():
        if isinstance(value, dict):
            typer.echo(f"{indent}{key}:")
            for name, detail in value.items():
                typer.echo(f"{indent}  {name}: {detail}")
        else:
            typer.echo(f"{indent}{key}: {value}")


@connectors_cli.command("check")
def connectors_check(name: str, as_json: JsonFlag = False) -> None:
    """Authenticates with the account and reads its balance or status; exit 1 if not ok."""

    async def run() -> dict[str, Any]:
        runtime = Runtime.build(get_settings(), url=resolved_url())
        try:
            report = await actions.check_connector(runtime, Actor.cli(), name)
        finally:
            await runtime.close()
        return {
            "name": name,
            "ok": report.ok,
            "detail": report.detail,
            "facts": dict(report.facts or {}),
        }

    try:
        result = asyncio.run(run())
    except ConnectorError as error:
        raise _fail(error) from error
    if as_json:
        echo_json(result)
    else:
        typer.echo(f"{name}: {'ok' if result['ok'] else 'NOT OK'}: {result['detail']}")
        _echo_facts(result["facts"], "  ")
    if not result["ok"]:
        raise typer.Exit(1)


def _route_option(action: str) -> Any:
    return typer.Option(f"--{action}", help=f"The connector that carries {action}, or none.")


@routes_cli.command("set")
def routes_set(
    operator: str,
    collect: Annotated[str | None, _route_option("collect")] = None,
    disburse: Annotated[str | None, _route_option("disburse")] = None,
    refund: Annotated[str | None, _route_option("refund")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Routes an operator's live operations to connector accounts; `none` removes a route,
    an option not given keeps it."""
    given = {"collect": collect, "disburse": disburse, "refund": refund}
    changes = {
        action: (None if value.lower() == "none" else value)
        for action, value in given.items()
        if value is not None
    }

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        row = await actions.set_routes(session, runtime, Actor.cli(), operator, changes)
        return {"operator": row.operator, **{a: row.connectors.get(a) for a in ACTIONS}}

    result = in_transaction(work)
    if as_json:
        echo_json(result)
    else:
        _echo_route(result)


def _echo_route(row: dict[str, Any]) -> None:
    typer.echo(
        f"{row['operator']}: " + "  ".join(f"{action}={row[action] or '-'}" for action in ACTIONS)
    )


@routes_cli.command("list")
def routes_list(as_json: JsonFlag = False) -> None:
    """Every operator with a route; an operator not listed is closed in live mode (unless
    this deployment serves it in-process)."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [
            {"operator": row.operator, **{a: row.connectors.get(a) for a in ACTIONS}}
            for row in await connectors.routes(session)
        ]

    rows: list[dict[str, Any]] = in_transaction(work)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo("no route: every operator is closed in live mode")
    for row in rows:
        _echo_route(row)


@exchanges_cli.command("list")
def exchanges_list(
    reference: str,
    merchant: Annotated[
        str | None,
        typer.Option(help="REFERENCE is this merchant's external_id (as the API takes it)."),
    ] = None,
    mode: Annotated[
        str | None, typer.Option(help="test or live: the external_id's environment.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """The operator operations of a payment, payout (pyo_…), refund (re_…) or plan, each with
    its HTTP exchanges in order (secrets were never recorded). With --merchant, REFERENCE
    may be the merchant's external_id."""
    livemode = None if mode is None else livemode_of(mode)

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        subject = reference
        if merchant is not None:
            subject = await reads.by_external_id(session, merchant, reference, livemode)
        return [operation_row(view) for view in await history.exchanges(session, subject)]

    echo_operations(in_transaction(work), as_json, f"no operator operation for {reference}")


@exchanges_cli.command("resend")
def exchanges_resend(reference: str) -> None:
    """Asks the operator to send its notification again for each pending operation of a
    payment, payout, refund or plan (pawaPay's resend-callback): when a final notification
    never came. What it then says is applied as any notification is."""

    async def run() -> list[str]:
        runtime = Runtime.build(get_settings(), url=resolved_url())
        try:
            async with runtime.sessionmaker() as session:
                views = await history.exchanges(session, reference)
            return [
                f"{view.operation.id} ({view.operation.connector}, {view.operation.action}): "
                + await actions.resend_operator_notification(
                    runtime, Actor.cli(), view.operation.id
                )
                for view in views
            ]
        finally:
            await runtime.close()

    lines = asyncio.run(run())
    for line in lines or [f"no operator operation for {reference}"]:
        typer.echo(line)


@exchanges_cli.command("review")
def exchanges_review(as_json: JsonFlag = False) -> None:
    """Operations whose outcome is still unknown after every scheduled status query (7 days):
    ask the operator what became of each, then settle it by hand."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [operation_row(view) for view in await history.under_review(session)]

    echo_operations(in_transaction(work), as_json, "no operation awaits review")


@exchanges_cli.command("settle")
def exchanges_settle(
    operation_id: str,
    outcome: Annotated[str, typer.Argument(help="succeeded or failed, as the operator says.")],
    reason: Annotated[str, typer.Option("--reason", help="What the operator said, and who.")],
) -> None:
    """Settles by hand an operation whose outcome the operator gave outside its API (after a
    review): its payment, payout or refund moves as if the operator had answered."""
    if outcome not in (Outcome.SUCCEEDED, Outcome.FAILED):
        raise typer.BadParameter("succeeded or failed", param_hint="OUTCOME")
    if not reason.strip():
        raise typer.BadParameter("say what the operator said", param_hint="--reason")
    try:
        operation = uuid.UUID(operation_id)
    except ValueError:
        raise typer.BadParameter("an operation id (a UUID)", param_hint="OPERATION_ID") from None

    async def work(session: AsyncSession, runtime: Runtime) -> None:
        await actions.settle_operation(
            session, runtime, Actor.cli(), operation, Outcome(outcome), reason
        )

    in_transaction(work)
    typer.echo(f"operation {operation_id} {outcome}")
