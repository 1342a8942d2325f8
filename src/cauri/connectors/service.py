"""What the staff do with connectors and routes (`cauri connectors …`, `cauri routes …`): the
rules, in one object (what was exchanged is read in connectors/history.py). Nothing here
commits: the caller's unit of work does, and running servers see the change at their next
resolution."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.errors import ConnectorError
from cauri.connectors.kinds import kind_named, validate_account
from cauri.connectors.registry import SIMULATOR, OperatorRegistry
from cauri.connectors.secrets import SecretBox
from cauri.models.connectors import ConnectorAccount, OperatorRoute
from cauri.operators import catalogue
from cauri.operators.config import ACTIONS
from cauri.operators.protocol import CheckReport, PredictsOperators

# Lower-case letters, digits, `-` and `_`: the name is part of the account's callback URL.
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
CALLBACK_PATH = "/api/v1/operator-callbacks/"


def callback_url(public_url: str | None, name: str) -> str | None:
    """Where the operator must send its notifications for this account (for MTN, the
    providerCallbackHost is this URL's host); None without CAURI_PUBLIC_URL."""
    return None if not public_url else public_url.rstrip("/") + CALLBACK_PATH + name


@dataclass(frozen=True)
class AccountView:
    account: ConnectorAccount
    routes: Sequence[tuple[str, str]]  # (operator, action), sorted


@dataclass(frozen=True)
class RouteRow:
    operator: str
    connectors: Mapping[str, str | None]  # by action


@dataclass(frozen=True)
class AccountDefinition:
    """A connector account as the staff write it (`cauri connectors add`, the console's
    form): its secrets in clear, held for the write only."""

    name: str
    kind: str
    environment: str
    base_url: str
    settings: Mapping[str, str]
    secrets: Mapping[str, str]


class Connectors:
    async def add(
        self,
        session: AsyncSession,
        definition: AccountDefinition,
        *,
        secret_key: str | None,
        now: datetime,
        keep_secrets: bool = False,
        previous_keys: Sequence[str] = (),
    ) -> tuple[ConnectorAccount, bool]:
        """Adds the account, or replaces the one of that name; True when it replaced one.
        `keep_secrets`: a secret not given keeps its stored value (an edit that leaves a
        credential's field empty), if the account's kind still knows its name;
        `previous_keys` decrypt those (CAURI_PREVIOUS_SECRET_KEYS)."""
        name, base_url, secrets = definition.name, definition.base_url, definition.secrets
        if not _NAME.fullmatch(name) or name == SIMULATOR:
            raise ConnectorError(
                f"Nom de connecteur invalide : {name!r} (lettres minuscules, chiffres, - et _, "
                f"63 caractères au plus ; « {SIMULATOR} » est réservé)."
            )
        connector_kind = kind_named(definition.kind)
        box = SecretBox(secret_key, previous_keys)
        existing = await session.get(ConnectorAccount, name, with_for_update=True)
        if keep_secrets and existing is not None:
            known = (*connector_kind.secrets, *connector_kind.optional_secrets)
            stored = {k: v for k, v in box.decrypt(name, existing.secrets).items() if k in known}
            if base_url != existing.base_url:
                _refuse_moved_secrets(name, existing.base_url, base_url, stored, secrets)
            secrets = stored | dict(secrets)
        validate_account(
            connector_kind, definition.environment, base_url, definition.settings, secrets
        )
        blob = box.encrypt(name, secrets)
        if existing is None:
            account = ConnectorAccount(name=name, created_at=now)
            session.add(account)
        else:
            account = existing
        account.kind = definition.kind
        account.environment = definition.environment
        account.base_url = base_url
        account.settings = dict(definition.settings)
        account.secret_names = sorted(secrets)
        account.secrets = blob
        account.updated_at = now
        if existing is not None:
            await self._check_routes_still_carried(session, account)
        await session.flush()
        return account, existing is not None

    async def _check_routes_still_carried(
        self, session: AsyncSession, account: ConnectorAccount
    ) -> None:
        kind = kind_named(account.kind)
        rows = await session.execute(
            select(OperatorRoute.operator, OperatorRoute.action).where(
                OperatorRoute.connector == account.name,
                OperatorRoute.action.not_in(kind.operations),
            )
        )
        for operator, action in rows:
            raise ConnectorError(
                f"Le type {kind.name} ne sait pas faire « {action} », or le connecteur "
                f"{account.name} porte cette opération pour {operator} : changez d'abord la "
                f"route (cauri routes set {operator} --{action} none)."
            )

    async def get(self, session: AsyncSession, name: str) -> ConnectorAccount:
        account = await session.get(ConnectorAccount, name)
        if account is None:
            raise ConnectorError(f"Aucun connecteur ne s'appelle {name}.")
        return account

    async def accounts(self, session: AsyncSession) -> list[AccountView]:
        accounts = (
            await session.scalars(select(ConnectorAccount).order_by(ConnectorAccount.name))
        ).all()
        routes: dict[str, list[tuple[str, str]]] = {}
        for route in await self._routes(session):
            routes.setdefault(route.connector, []).append((route.operator, route.action))
        return [AccountView(account, routes.get(account.name, [])) for account in accounts]

    async def record_check(
        self, session: AsyncSession, name: str, report: CheckReport, now: datetime
    ) -> None:
        """Keeps the check's verdict on the account, for `cauri connectors list`."""
        account = await self.get(session, name)
        account.checked_at = now
        account.check_ok = report.ok
        account.check_detail = report.detail
        account.check_facts = dict(report.facts or {})

    async def predictor(
        self, session: AsyncSession, registry: OperatorRegistry
    ) -> PredictsOperators | None:
        """The first connector account (by name) whose operator network can tell whose a
        number is (pawaPay)."""
        names = await session.scalars(select(ConnectorAccount.name).order_by(ConnectorAccount.name))
        for name in names.all():
            routed = await registry.by_name(session, name)
            if routed is not None and isinstance(routed.adapter, PredictsOperators):
                return routed.adapter
        return None

    async def check(
        self, session: AsyncSession, registry: OperatorRegistry, name: str
    ) -> CheckReport:
        """Builds a connector of its own for the account and asks it to check itself. Meant
        to run outside a transaction (it talks to the network): `session` is only read."""
        account = await self.get(session, name)
        try:
            adapter = registry.build(
                account.name,
                account.kind,
                account.environment,
                account.base_url,
                account.settings,
                account.secrets,
            )
        except ConnectorError as error:
            return CheckReport(ok=False, detail=error.message)
        except Exception as error:
            return CheckReport(
                ok=False,
                detail=f"Le connecteur {name} ne peut pas être construit : "
                f"{type(error).__name__}: {error}",
            )
        try:
            return await adapter.check()
        except Exception as error:
            return CheckReport(
                ok=False,
                detail=f"La vérification a échoué : {type(error).__name__}: {error}",
            )
        finally:
            await adapter.aclose()

    async def set_routes(
        self,
        session: AsyncSession,
        operator: str,
        changes: Mapping[str, str | None],
        now: datetime,
    ) -> RouteRow:
        """Sets (a name) or removes (None) the route of each action given; the others are
        kept."""
        mode = catalogue.find(operator)
        if mode is None:
            raise ConnectorError(f"Opérateur inconnu : {operator}.")
        code = mode.operator.lower()
        if not changes:
            raise ConnectorError(
                "Rien à changer : donnez --collect, --disburse ou --refund (NOM, ou none)."
            )
        for action, connector in changes.items():
            if action not in ACTIONS:
                raise ConnectorError(f"Opération inconnue : {action}.")
            if connector is None:
                await session.execute(
                    delete(OperatorRoute).where(
                        OperatorRoute.operator == code, OperatorRoute.action == action
                    )
                )
                continue
            if mode.is_card and action != "collect":
                raise ConnectorError(
                    f"{mode.operator} est un moyen de paiement par carte : seule la collecte "
                    f"(--collect) se route, pas « {action} »."
                )
            account = await self.get(session, connector)
            kind = kind_named(account.kind)
            carried = kind.operators(account.settings) if kind.operators else None
            if carried is not None and code not in carried:
                raise ConnectorError(
                    f"Le connecteur {connector} (type {kind.name}) ne porte pas {code} "
                    f"(il porte : {', '.join(sorted(carried))})."
                )
            if action not in kind.operations:
                raise ConnectorError(
                    f"Le connecteur {connector} (type {kind.name}) ne sait pas faire "
                    f"« {action} » (il sait : {', '.join(kind.operations)})."
                )
            await session.execute(
                insert(OperatorRoute)
                .values(operator=code, action=action, connector=connector, updated_at=now)
                .on_conflict_do_update(
                    index_elements=[OperatorRoute.operator, OperatorRoute.action],
                    set_={"connector": connector, "updated_at": now},
                )
            )
        return next(
            (row for row in await self.routes(session) if row.operator == code),
            RouteRow(code, dict.fromkeys(ACTIONS)),
        )

    async def _routes(self, session: AsyncSession) -> Sequence[OperatorRoute]:
        return (
            await session.scalars(
                select(OperatorRoute).order_by(OperatorRoute.operator, OperatorRoute.action)
            )
        ).all()

    async def routes(self, session: AsyncSession) -> list[RouteRow]:
        """Every operator with at least one route, by operator code."""
        by_operator: dict[str, dict[str, str | None]] = {}
        for route in await self._routes(session):
            by_operator.setdefault(route.operator, dict.fromkeys(ACTIONS))[route.action] = (
                route.connector
            )
        return [RouteRow(operator, actions) for operator, actions in by_operator.items()]


def _refuse_moved_secrets(
    name: str,
    stored_url: str,
    base_url: str,
    stored: Mapping[str, str],
    given: Mapping[str, str],
) -> None:
    """Credentials never follow a new base URL on their own: whoever may edit an account
    without knowing its secrets could otherwise point them at a host of theirs and press
    « vérifier ». Each stored credential must be typed again."""
    missing = sorted(set(stored) - set(given))
    if missing:
        raise ConnectorError(
            f"L'URL de base du connecteur {name} change ({stored_url} → {base_url}) : ses "
            f"identifiants ne suivent pas une nouvelle adresse, saisissez-les de nouveau "
            f"({', '.join(missing)})."
        )


connectors = Connectors()
