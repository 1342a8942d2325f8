"""Builders for the ledger tests: fresh accounts (so tests and examples never share a
balance), single-transaction credits and debits, and reads of what the ledger wrote."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cauri.kit.db import unit_of_work
from cauri.ledger import accounts
from cauri.ledger.accounts import Account
from cauri.ledger.service import Entry, transfer

Sessions = async_sessionmaker[AsyncSession]


def fresh_account(currency: str = "XOF", livemode: bool = False) -> Account:
    """A merchant's available balance nobody else touches."""
    return accounts.merchant_available(uuid.uuid4().hex, livemode, currency)


def clearing(account: Account) -> Account:
    """The external account on the other side of credits and debits."""
    return accounts.operator_clearing("mtn", account.livemode, account.currency)


def credit_entries(account: Account, amount: int) -> list[Entry]:
    return [Entry(clearing(account), -amount), Entry(account, amount)]


def debit_entries(account: Account, amount: int) -> list[Entry]:
    return [Entry(account, -amount), Entry(clearing(account), amount)]


async def record(
    session: AsyncSession, entries: Sequence[Entry], *, reference: str | None = None
) -> int:
    return await transfer(
        session, kind="test", reference=reference, entries=entries, at=datetime.now(UTC)
    )


async def credit(sessions: Sessions, account: Account, amount: int) -> None:
    async with unit_of_work(sessions) as session:
        await record(session, credit_entries(account, amount))


async def debit(sessions: Sessions, account: Account, amount: int) -> None:
    async with unit_of_work(sessions) as session:
        await record(session, debit_entries(account, amount))


async def rows(sessions: Sessions, sql: str, **params: Any) -> list[Any]:
    async with sessions() as session:
        return list((await session.execute(text(sql), params)).all())


async def head(sessions: Sessions, account: Account) -> int | None:
    """The account row's folded balance, None when the row does not exist."""
    found = await rows(
        sessions, "SELECT balance FROM ledger_accounts WHERE code = :c", c=account.code
    )
    return int(found[0][0]) if found else None


async def postings(sessions: Sessions, account: Account) -> list[tuple[int, bool]]:
    """(amount, folded) of the account's postings, oldest first."""
    found = await rows(
        sessions,
        "SELECT amount, folded FROM ledger_postings WHERE account = :c ORDER BY id",
        c=account.code,
    )
    return [(int(amount), bool(folded)) for amount, folded in found]


async def transaction_count(sessions: Sessions) -> int:
    return int((await rows(sessions, "SELECT count(*) FROM ledger_transactions"))[0][0])
