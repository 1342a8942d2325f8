"""Connectors and routes: every connector account (its kind, environment, last check and the
availability of the routes it carries; its credentials by name only) and every operator's
routes, for all staff to read; administrators check an account, add or edit one and set a
route, through the staff's actions (cauri.staff.actions) as `cauri connectors add|check` and
`cauri routes set` do.

Credentials are write-only: password fields, never filled in, never shown back (not even
after a refusal), only their names in the page and the audit log. On an edit, a credential
left empty keeps its stored value (Connectors.add's `keep_secrets`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.kinds import KINDS, kind_named
from cauri.connectors.service import AccountDefinition, AccountView, callback_url, connectors
from cauri.console.acting import actor, permission
from cauri.console.auth import Staff
from cauri.console.pages import Pages
from cauri.console.rendering import redirect, render
from cauri.console.security import PREFIX
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, Conflict
from cauri.models import ConnectorAccount
from cauri.operators.catalogue import CATALOGUE
from cauri.operators.config import ACTIONS, ENVIRONMENTS, ConnectorKind
from cauri.runtime import Runtime
from cauri.signin.forms import posted
from cauri.staff import actions
from cauri.staff.overview import route_states
from cauri.staff.roles import Permission

PATH = "/connectors"
SETTING, SECRET = "setting.", "secret."
NO_CONNECTOR = "none"  # the route form's choice that removes the route
OPERATORS = tuple(sorted({mode.operator.lower() for mode in CATALOGUE}))
# What the list says after a form, by the word its address carries.
DONE = {
    "ajoute": "Connecteur enregistré.",
    "modifie": "Connecteur modifié : les serveurs le reconstruisent à leur prochaine opération.",
    "route": "Route enregistrée.",
}

pages = Pages()


@dataclass(frozen=True)
class Credential:
    name: str
    defined: bool


@dataclass(frozen=True)
class AccountRow:
    view: AccountView
    credentials: list[Credential]
    callback_url: str | None
    states: dict[tuple[str, str], str]  # (operator, action) -> availability


def _known_secrets(kind_name: str, stored: list[str]) -> list[str]:
    kind = KINDS.get(kind_name)
    if kind is None:  # a kind this version no longer has: what is stored
        return list(stored)
    return [*kind.secrets, *kind.optional_secrets]


async def _list(
    request: Request,
    session: AsyncSession,
    runtime: Runtime,
    refusal: CauriError | None = None,
) -> Response:
    states = {(r.operator, r.action): r.state for r in await route_states(session, runtime)}
    rows = [
        AccountRow(
            view,
            [
                Credential(name, name in view.account.secret_names)
                for name in _known_secrets(view.account.kind, view.account.secret_names)
            ],
            callback_url(runtime.settings.public_url, view.account.name),
            {route: states.get(route, "—") for route in view.routes},
        )
        for view in await connectors.accounts(session)
    ]
    context = {
        "rows": rows,
        "routes": await connectors.routes(session),
        "states": states,
        "actions": ACTIONS,
        "operators": OPERATORS,
        "kinds": sorted(KINDS),
        "none": NO_CONNECTOR,
        "done": DONE.get(request.query_params.get("fait", "")),
        "checked": request.query_params.get("verifie"),
        "refusal": refusal,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "console/connectors.html", context, status)


@pages.get(PATH, Permission.READ, menu="Connecteurs")
async def connector_list(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    return await _list(request, session, runtime)


# --- adding and editing an account ----------------------------------------------------


def _form(
    request: Request,
    kind: ConnectorKind,
    values: Mapping[str, Any],
    stored: list[str],
    refusal: CauriError | None = None,
) -> Response:
    """The account's form: `values` as typed or stored, never a credential (their fields
    stay empty); `stored`: the names of the credentials the account has (an edit)."""
    context = {
        "kind": kind,
        "values": values,
        "stored": stored,
        "environments": ENVIRONMENTS,
        "setting_prefix": SETTING,
        "secret_prefix": SECRET,
        "refusal": refusal,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "console/connector_form.html", context, status)


@pages.get(PATH + "/new", Permission.MANAGE_CONNECTORS)
async def new_connector(request: Request, staff: Staff) -> Response:
    """Its kind chosen first (the list's form): the kind decides the fields."""
    kind = kind_named(request.query_params.get("kind", ""))
    return _form(request, kind, {"environment": "sandbox", "settings": {}}, [])


def _stored(account: ConnectorAccount) -> dict[str, Any]:
    return {
        "name": account.name,
        "editing": True,
        "environment": account.environment,
        "base_url": account.base_url,
        "settings": dict(account.settings),
    }


@pages.get(PATH + "/{name}/edit", Permission.MANAGE_CONNECTORS)
async def edit_connector(
    request: Request, staff: Staff, session: SessionDep, name: str
) -> Response:
    account = await connectors.get(session, name)
    return _form(request, kind_named(account.kind), _stored(account), list(account.secret_names))


@pages.post(PATH, permission(actions.ADD_CONNECTOR))
async def save_connector(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """Adds an account, or (`editing`) replaces the one of that name, its credentials left
    empty kept."""
    fields = await posted(request)
    editing = fields.get("editing") == "1"
    name = fields.get("name", "")

    def prefixed(prefix: str) -> dict[str, str]:
        # An empty field is no value: an optional setting left out, a credential kept.
        return {
            key.removeprefix(prefix): value
            for key, value in fields.items()
            if key.startswith(prefix) and value
        }

    settings = prefixed(SETTING)

    async def save() -> bool:
        if not editing and await session.get(ConnectorAccount, name) is not None:
            raise Conflict(f"Un connecteur s'appelle déjà {name} : modifiez-le depuis la liste.")
        return await actions.add_connector(
            session,
            runtime,
            actor(staff),
            AccountDefinition(
                name=name,
                kind=fields.get("kind", ""),
                environment=fields.get("environment", ""),
                base_url=fields.get("base_url", ""),
                settings=settings,
                secrets=prefixed(SECRET),  # held for the action only, never shown back
            ),
            keep_secrets=editing,
        )

    result = await attempt(session, save)
    if not isinstance(result, CauriError):
        return redirect(f"{PREFIX}{PATH}?fait={'modifie' if editing else 'ajoute'}")
    kind = KINDS.get(fields.get("kind", ""))
    if kind is None:
        return await _list(request, session, runtime, result)
    account = await session.get(ConnectorAccount, name) if editing else None
    values = {
        "name": name,
        "editing": account is not None,
        "environment": fields.get("environment", ""),
        "base_url": fields.get("base_url", ""),
        "settings": settings,
    }
    stored = list(account.secret_names) if account is not None else []
    return _form(request, kind, values, stored, result)


# --- checking an account, setting a route ---------------------------------------------


@pages.post(PATH + "/{name}/check", permission(actions.CHECK_CONNECTOR))
async def check_connector(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep, name: str
) -> Response:
    """The verdict is kept on the account: the list shows it, read again."""
    await connectors.get(session, name)  # an unknown name: the 422 page, nothing written
    # The request's transaction (its session's last-seen time) ends before the check talks
    # to the network; the check keeps its verdict in one of its own.
    await session.commit()
    result = await attempt(session, lambda: actions.check_connector(runtime, actor(staff), name))
    if isinstance(result, CauriError):
        return await _list(request, session, runtime, result)
    return redirect(f"{PREFIX}{PATH}?verifie={name}#connecteur-{name}")


@pages.post("/routes", permission(actions.SET_ROUTES))
async def set_route(
    request: Request, staff: Staff, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """One operator's one action: to a connector, or `none` (the route removed)."""
    fields = await posted(request)
    connector = fields.get("connector", "")
    changes = {fields.get("action", ""): None if connector == NO_CONNECTOR else connector}
    result = await attempt(
        session,
        lambda: actions.set_routes(
            session, runtime, actor(staff), fields.get("operator", ""), changes
        ),
    )
    if isinstance(result, CauriError):
        return await _list(request, session, runtime, result)
    return redirect(f"{PREFIX}{PATH}?fait=route#routes")
