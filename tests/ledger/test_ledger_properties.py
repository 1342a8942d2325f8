"""Any sequence of ledger operations against a pure-Python model (DESIGN invariants 2, 3).

Each Hypothesis example works on fresh accounts (new merchant ids), so examples never share a
balance and no table needs emptying between them.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cauri.ledger.accounts import Account
from cauri.ledger.service import Entry, Overdraft, balances
from cauri.runtime import Runtime
from tests.ledger.builders import clearing, fresh_account, record, rows

AMOUNT = st.integers(min_value=1, max_value=5_000)
XOF_ACCOUNTS = 3  # guarded XOF accounts per example
EUR_ACCOUNTS = 2


@dataclass(frozen=True)
class Credit:
    account: int
    amount: int
    eur: bool


@dataclass(frozen=True)
class Debit:
    account: int
    amount: int
    eur: bool


@dataclass(frozen=True)
class Move:
    """Guarded to guarded, one currency."""

    source: int
    target: int
    amount: int


@dataclass(frozen=True)
class Split:
    """One debit paid to two guarded accounts (a payout and its fee, say)."""

    source: int
    first: int
    second: int
    first_amount: int
    second_amount: int


@dataclass(frozen=True)
class Churn:
    """Two postings on one account in one transaction: only their net counts."""

    account: int
    out: int
    back: int


@dataclass(frozen=True)
class Swap:
    """A two-currency transaction: XOF one way, EUR the other, each balanced."""

    first: int
    second: int
    xof: int
    eur: int


@dataclass(frozen=True)
class Overdraw:
    """Debits more than the account holds (its balance, unfolded credits included, + extra)."""

    account: int
    extra: int
    eur: bool


Operation = Credit | Debit | Move | Split | Churn | Swap | Overdraw

xof_index = st.integers(0, XOF_ACCOUNTS - 1)
eur_index = st.integers(0, EUR_ACCOUNTS - 1)


@st.composite
def _distinct(draw: st.DrawFn, count: int) -> list[int]:
    return draw(st.permutations(range(XOF_ACCOUNTS)))[:count]


@st.composite
def _churn(draw: st.DrawFn) -> Churn:
    out = draw(AMOUNT)
    return Churn(draw(xof_index), out, draw(AMOUNT.filter(lambda back: back != out)))


def _in(eur: bool) -> st.SearchStrategy[int]:
    return eur_index if eur else xof_index


operations = st.one_of(
    st.booleans().flatmap(lambda eur: st.builds(Credit, _in(eur), AMOUNT, st.just(eur))),
    st.booleans().flatmap(lambda eur: st.builds(Debit, _in(eur), AMOUNT, st.just(eur))),
    _distinct(2).flatmap(lambda ids: st.builds(Move, st.just(ids[0]), st.just(ids[1]), AMOUNT)),
    _distinct(3).flatmap(lambda ids: st.builds(Split, *map(st.just, ids), AMOUNT, AMOUNT)),
    _churn(),
    _distinct(2).flatmap(
        lambda ids: st.builds(Swap, st.just(ids[0]), st.just(ids[1] % EUR_ACCOUNTS), AMOUNT, AMOUNT)
    ),
    st.booleans().flatmap(
        lambda eur: st.builds(Overdraw, _in(eur), st.integers(1, 100), st.just(eur))
    ),
)


class Model:
    """The balances the ledger must show, computed in plain Python."""

    def __init__(self) -> None:
        self.xof = [fresh_account("XOF") for _ in range(XOF_ACCOUNTS)]
        self.eur = [fresh_account("EUR") for _ in range(EUR_ACCOUNTS)]
        self.balance: dict[Account, int] = {account: 0 for account in self.xof + self.eur}

    def account(self, index: int, eur: bool) -> Account:
        return (self.eur if eur else self.xof)[index]

    def entries(self, op: Operation) -> list[Entry]:
        match op:
            case Credit(index, amount, eur):
                account = self.account(index, eur)
                return [Entry(clearing(account), -amount), Entry(account, amount)]
            case Debit(index, amount, eur):
                account = self.account(index, eur)
                return [Entry(account, -amount), Entry(clearing(account), amount)]
            case Move(source, target, amount):
                return [Entry(self.xof[source], -amount), Entry(self.xof[target], amount)]
            case Split(source, first, second, first_amount, second_amount):
                return [
                    Entry(self.xof[source], -(first_amount + second_amount)),
                    Entry(self.xof[first], first_amount),
                    Entry(self.xof[second], second_amount),
                ]
            case Churn(index, out, back):
                account = self.xof[index]
                return [
                    Entry(account, -out),
                    Entry(account, back),
                    Entry(clearing(account), out - back),
                ]
            case Swap(first, second, xof, eur):
                return [
                    Entry(self.xof[first], -xof),
                    Entry(self.xof[second], xof),
                    Entry(self.eur[second], -eur),
                    Entry(self.eur[1 - second], eur),
                ]
            case Overdraw(index, extra, eur):
                account = self.account(index, eur)
                amount = self.balance[account] + extra
                return [Entry(account, -amount), Entry(clearing(account), amount)]
        raise AssertionError(op)

    def refused(self, entries: list[Entry]) -> tuple[Account, int, int] | None:
        """(account, balance, debit) of the first guarded account, in code order, whose net
        debit its balance does not cover; None when the transaction goes through."""
        net: dict[Account, int] = defaultdict(int)
        for entry in entries:
            net[entry.account] += entry.amount
        for account in sorted(net):
            if account in self.balance and self.balance[account] + net[account] < 0:
                return account, self.balance[account], -net[account]
        return None

    def apply(self, entries: list[Entry]) -> None:
        for entry in entries:
            if entry.account in self.balance:
                self.balance[entry.account] += entry.amount


@settings(
    max_examples=50,
    deadline=None,
    # `runtime` is function-scoped but only lends its sessionmaker: examples isolate
    # themselves with fresh accounts, so sharing it across examples is safe.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(st.tuples(operations, st.booleans()), min_size=1, max_size=25))
async def test_any_sequence_keeps_the_ledger_balanced_and_matches_the_model(
    runtime: Runtime, ops: list[tuple[Operation, bool]]
) -> None:
    model = Model()
    tag = uuid.uuid4().hex  # every transaction of this example carries it as reference
    written = 0
    for op, carry_on_after_refusal in ops:
        entries = model.entries(op)
        expected_refusal = model.refused(entries)
        async with runtime.sessionmaker() as session:
            try:
                await record(session, entries, reference=tag)
            except Overdraft as refusal:
                assert expected_refusal == (refusal.account, refusal.balance, refusal.debit), op
                # A service may carry on after a refusal (a failed payout is recorded): the
                # ledger must have written nothing that changes a balance either way.
                await (session.commit() if carry_on_after_refusal else session.rollback())
            else:
                assert expected_refusal is None, op
                await session.commit()
                model.apply(entries)
                written += 1
        async with runtime.sessionmaker() as session:
            assert await balances(session, list(model.balance)) == model.balance, op
        assert all(amount >= 0 for amount in model.balance.values())

    codes = [account.code for account in model.balance]
    assert await rows(
        runtime.sessionmaker, "SELECT count(*) FROM ledger_transactions WHERE reference = :r", r=tag
    ) == [(written,)]
    assert not await rows(
        runtime.sessionmaker,
        "SELECT p.transaction_id, p.currency FROM ledger_postings p "
        "JOIN ledger_transactions t ON t.id = p.transaction_id WHERE t.reference = :r "
        "GROUP BY p.transaction_id, p.currency HAVING sum(p.amount) <> 0",
        r=tag,
    )
    posted = dict(
        await rows(
            runtime.sessionmaker,
            "SELECT account, sum(amount) FROM ledger_postings WHERE account = ANY(:codes) "
            "GROUP BY account",
            codes=codes,
        )
    )
    assert {a: posted.get(a.code, 0) for a in model.balance} == model.balance
    # The head of every locked account equals the sum of its folded postings.
    assert not await rows(
        runtime.sessionmaker,
        "SELECT a.code FROM ledger_accounts a LEFT JOIN ledger_postings p "
        "ON p.account = a.code AND p.folded WHERE a.code = ANY(:codes) "
        "GROUP BY a.code, a.balance HAVING a.balance <> coalesce(sum(p.amount), 0)",
        codes=codes,
    )
