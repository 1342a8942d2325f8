"""A statement fetched through the operator's API, where it has one (GivesStatements):
saved to a file as the operator gives it, then imported as a file is. Nothing is held while
the operator is asked."""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path

from sqlalchemy import select

from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict, InvalidRequest, NotFound, ServerError
from cauri.models.statements import OperatorStatement
from cauri.operators.protocol import GivesStatements, OperatorAdapter, StatementUnavailable
from cauri.reconciliation import imports
from cauri.reconciliation.days import Days
from cauri.runtime import Runtime


class NoStatementApi(InvalidRequest):
    """The connector's operator gives its statements as files only."""


def fetched_name(connector: str, day: date) -> str:
    return f"{connector} {day.isoformat()} (API)"


async def adapter_of(runtime: Runtime, connector: str) -> OperatorAdapter:
    """The connector account's adapter, as the call protocol builds it (404: no such
    account)."""
    async with runtime.sessionmaker() as session:
        routed = await runtime.operators.by_name(session, connector)
    if routed is None:
        raise NotFound(f"Aucun connecteur {connector}.")
    return routed.adapter


async def fetch(runtime: Runtime, actor: Actor, connector: str, day: date) -> imports.Imported:
    """Fetches and imports `connector`'s statement of `day` (the operator's: Wave's and
    pawaPay's are UTC days; it covers that day of the platform's), once: a day fetched
    already is refused (its lines stand; a file import adds to them)."""
    name = fetched_name(connector, day)
    adapter = await adapter_of(runtime, connector)
    async with runtime.sessionmaker() as session:
        taken = await session.scalar(
            select(OperatorStatement.id).where(
                OperatorStatement.connector == connector, OperatorStatement.name == name
            )
        )
    if not isinstance(adapter, GivesStatements):
        raise NoStatementApi(
            f"L'opérateur de {connector} n'a pas d'API de relevé : importez son fichier "
            "(cauri reconcile import)."
        )
    if taken is not None:
        raise Conflict(f"Le relevé du {day.isoformat()} de {connector} est déjà là ({taken}).")
    with tempfile.TemporaryDirectory(prefix="cauri-statement-") as folder:
        path = Path(folder) / name
        try:
            with path.open("w", encoding="utf-8", newline="") as out:
                async for part in adapter.statement(day):
                    out.write(part)
        except StatementUnavailable as unavailable:
            raise ServerError(str(unavailable)) from unavailable
        async with unit_of_work(runtime.sessionmaker) as session:
            # It covers the day asked, lines or not: a quiet day is a statement too.
            return await imports.import_file(
                session,
                connector,
                path,
                actor,
                runtime.clock.now(),
                Days(runtime.settings.zone),
                covers=day,
            )
