"""The double entry, enforced by PostgreSQL (issue 23, migration 0022; DESIGN invariant 2):
a ledger transaction whose postings do not sum to zero per currency is refused at its
commit, whether its statements ran in a transaction or one ran on its own, and nothing it
wrote stays; postings are never changed or deleted. The application never gets there (the
ledger checks first): when it does, the API answers a bare 500 and has written nothing."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime

import asyncpg
import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import exc, select, text

from cauri.kit.db import unit_of_work
from cauri.kit.prepared import Prepared
from cauri.ledger.service import NewTransaction, appended
from cauri.runtime import Runtime
from tests.ledger.builders import rows, transaction_count
from tests.payments.builders import PAYMENTS
from tests.payouts.builders import FAILS_LATER, create, top_up
from tests.support import make_merchant, momo_body, scalar

CHECK_VIOLATION = "23514"
REFUSED = "42501"  # insufficient_privilege: the append-only refusal

_TRANSACTION = text(
    "INSERT INTO ledger_transactions (kind, reference, livemode, created_at) "
    "VALUES ('test', :reference, false, now()) RETURNING id"
)
# Operators' clearing accounts: external, so that a committed transaction may leave any of
# them negative (the reconciliation every test ends with).
_POSTINGS = text(
    "INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount) "
    "SELECT :transaction, (SELECT created_at FROM ledger_transactions WHERE id = :transaction), "
    "'operator:op' || p.i || ':clearing:test:' || p.currency, p.currency, p.amount "
    "FROM unnest(CAST(:currencies AS text[]), CAST(:amounts AS bigint[])) "
    "WITH ORDINALITY AS p(currency, amount, i)"
)
# The statement the hot paths append a transaction with (cauri.ledger.service), run on its
# own as they run it (kit.prepared: before any BEGIN), its parameters made by hand.
_APPENDED = appended(None)
_APPEND_ALONE = Prepared(select(_APPENDED.postings.c.transaction_id).limit(1))

Posting = tuple[str, int]  # currency, amount


def _balanced(postings: list[Posting]) -> bool:
    totals: dict[str, int] = defaultdict(int)
    for currency, amount in postings:
        totals[currency] += amount
    return not any(totals.values())


async def _write(runtime: Runtime, reference: str, *statements: list[Posting]) -> None:
    """One ledger transaction, its postings in as many statements as given, committed."""
    async with unit_of_work(runtime.sessionmaker) as session:
        transaction = (await session.execute(_TRANSACTION, {"reference": reference})).scalar()
        for postings in statements:
            await session.execute(
                _POSTINGS,
                {
                    "transaction": transaction,
                    "currencies": [currency for currency, _ in postings],
                    "amounts": [amount for _, amount in postings],
                },
            )


async def _written(runtime: Runtime, reference: str) -> tuple[int, int]:
    """(transactions, postings) under the reference."""
    found = await rows(
        runtime.sessionmaker,
        "SELECT count(DISTINCT t.id), count(p.id) FROM ledger_transactions t "
        "LEFT JOIN ledger_postings p ON p.transaction_id = t.id WHERE t.reference = :r",
        r=reference,
    )
    return int(found[0][0]), int(found[0][1])


def _postgres(error: exc.DBAPIError) -> asyncpg.PostgresError:
    """asyncpg's error under SQLAlchemy's (and its DB-API adapter's)."""
    cause = error.orig.__cause__
    assert isinstance(cause, asyncpg.PostgresError), error
    return cause


async def test_an_unbalanced_transaction_is_refused_at_its_commit_and_leaves_nothing(
    runtime: Runtime,
) -> None:
    with pytest.raises(exc.IntegrityError) as refused:
        await _write(runtime, "by-hand", [("XOF", 1_000), ("XOF", -999)])
    refusal = _postgres(refused.value)
    assert refusal.sqlstate == CHECK_VIOLATION
    assert refusal.constraint_name == "ledger_postings_balanced"
    assert "does not sum to zero in XOF (1)" in refusal.message
    assert await _written(runtime, "by-hand") == (0, 0)


async def test_the_check_waits_for_the_commit_postings_may_come_in_several_statements(
    runtime: Runtime,
) -> None:
    await _write(runtime, "split", [("XOF", 1_000)], [("XOF", -600), ("XOF", -400)])
    assert await _written(runtime, "split") == (1, 3)


async def test_a_statement_run_on_its_own_is_checked_when_it_ends(runtime: Runtime) -> None:
    """No BEGIN, no COMMIT: the hot paths' one statement is its own transaction, and the
    deferred check runs at its end; what the statement wrote is gone."""
    unbalanced = NewTransaction(
        kind="payment",
        reference="alone",
        livemode=False,
        at=datetime.now(UTC),
        accounts=["operator:mtn:clearing:test:XOF", "operator:moov:clearing:test:XOF"],
        currencies=["XOF", "XOF"],
        amounts=[-1_000, 1_001],
        foldeds=[False, False],
    )
    async with runtime.sessionmaker() as session:
        with pytest.raises(asyncpg.CheckViolationError) as refused:
            await _APPEND_ALONE.fetchrow(session, _APPENDED.values(unbalanced))
    assert refused.value.constraint_name == "ledger_postings_balanced"
    assert await _written(runtime, "alone") == (0, 0)
    async with runtime.sessionmaker() as session:
        balanced = replace(unbalanced, amounts=[-1_000, 1_000])
        assert (await _APPEND_ALONE.fetchrow(session, _APPENDED.values(balanced))) is not None
    assert await _written(runtime, "alone") == (1, 2)


POSTING = st.tuples(
    st.sampled_from(["XOF", "EUR", "USD"]),
    st.integers(min_value=-(10**12), max_value=10**12).filter(bool),
)


@st.composite
def transactions(draw: st.DrawFn) -> list[list[Posting]]:
    """A transaction's postings, balanced per currency or not, in one or two statements."""
    postings = draw(st.lists(POSTING, min_size=1, max_size=6))
    if draw(st.booleans()):  # closed: each currency's sum posted back
        totals: dict[str, int] = defaultdict(int)
        for currency, amount in postings:
            totals[currency] += amount
        postings += [(currency, -total) for currency, total in totals.items() if total]
    cut = draw(st.integers(min_value=0, max_value=len(postings)))
    return [part for part in (postings[:cut], postings[cut:]) if part]


@settings(
    max_examples=60,
    deadline=None,
    # `runtime` only lends its sessionmaker; each example has its own reference.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(statements=transactions())
@example(statements=[[("XOF", 100), ("EUR", -100)]])  # zero in total, not per currency
@example(statements=[[("XOF", 100), ("EUR", 100)], [("XOF", -100), ("EUR", -100)]])
async def test_a_transaction_commits_if_and_only_if_it_is_balanced_per_currency(
    runtime: Runtime, statements: list[list[Posting]]
) -> None:
    reference = uuid.uuid4().hex
    postings = [posting for part in statements for posting in part]
    try:
        await _write(runtime, reference, *statements)
    except exc.IntegrityError as refused:
        assert not _balanced(postings), postings
        assert _postgres(refused).sqlstate == CHECK_VIOLATION
        assert await _written(runtime, reference) == (0, 0)
    else:
        assert _balanced(postings), postings
        assert await _written(runtime, reference) == (1, len(postings))


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE ledger_postings SET amount = -amount",
        "UPDATE ledger_postings SET account = 'operator:moov:clearing:test:XOF'",
        "UPDATE ledger_postings SET currency = 'EUR'",
        "UPDATE ledger_postings SET transaction_id = transaction_id",
        "DELETE FROM ledger_postings",
        "TRUNCATE ledger_postings, ledger_transactions",
    ],
)
async def test_a_posting_is_never_changed_or_deleted(runtime: Runtime, change: str) -> None:
    await _write(runtime, "kept", [("XOF", 500), ("XOF", -500)])
    with pytest.raises(exc.DBAPIError) as refused:
        async with unit_of_work(runtime.sessionmaker) as session:
            await session.execute(text(change))
    assert _postgres(refused.value).sqlstate == REFUSED
    assert "ledger_postings is append-only" in _postgres(refused.value).message
    assert await rows(
        runtime.sessionmaker, "SELECT currency, amount FROM ledger_postings ORDER BY id"
    ) == [("XOF", 500), ("XOF", -500)]


async def test_the_fold_still_marks_postings(runtime: Runtime) -> None:
    await _write(runtime, "folded", [("XOF", 500), ("XOF", -500)])
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text("UPDATE ledger_postings SET folded = true"))
    assert await scalar(runtime, "SELECT count(*) FROM ledger_postings WHERE folded") == 2


# A bug past the ledger's own check, reproduced in the database: every credit posted one
# unit more than it was asked.
_ONE_MORE = (
    """
CREATE FUNCTION zero_sum_test_one_more() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.amount > 0 THEN NEW.amount := NEW.amount + 1; END IF;
  RETURN NEW;
END $$
""",
    "CREATE TRIGGER zero_sum_test_one_more BEFORE INSERT ON ledger_postings "
    "FOR EACH ROW EXECUTE FUNCTION zero_sum_test_one_more()",
)


@asynccontextmanager
async def one_more(runtime: Runtime) -> AsyncIterator[None]:
    async with runtime.engine.begin() as connection:
        for statement in _ONE_MORE:
            await connection.execute(text(statement))
    try:
        yield
    finally:
        async with runtime.engine.begin() as connection:
            await connection.execute(text("DROP TRIGGER zero_sum_test_one_more ON ledger_postings"))
            await connection.execute(text("DROP FUNCTION zero_sum_test_one_more()"))


async def _nothing_but(runtime: Runtime, transactions: int) -> None:
    """Only the `transactions` ledger transactions written before: no payment, payout,
    event, or posting of the refused request."""
    assert await transaction_count(runtime.sessionmaker) == transactions
    for table in ("payments", "payouts", "events"):
        assert await scalar(runtime, f"SELECT count(*) FROM {table}") == 0, table  # noqa: S608


async def test_a_payment_in_one_statement_is_a_500_with_nothing_written(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    async with one_more(runtime):
        response = await client.post(PAYMENTS, json=momo_body(), headers=merchant.headers())
    assert response.status_code == 500, response.text
    assert response.json() == {
        "success": False,
        "error": {"code": "server_error", "message": "Une erreur interne est survenue."},
    }
    await _nothing_but(runtime, 0)


@pytest.mark.parametrize("phone_number", ["22997000000", FAILS_LATER], ids=["paid", "recorded"])
async def test_a_payout_is_a_500_with_nothing_written(
    client: httpx.AsyncClient, runtime: Runtime, phone_number: str
) -> None:
    """Paid at once (one statement on its own), or recorded in the request's transaction."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5_000)
    async with one_more(runtime):
        response = await create(client, merchant.headers(), amount=1_000, phone_number=phone_number)
    assert response.status_code == 500, response.text
    assert response.json()["error"]["code"] == "server_error"
    await _nothing_but(runtime, 1)  # the top-up
