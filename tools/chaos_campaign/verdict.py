"""The campaign's verdict, from both sides of the money: Cauri's database and what each
operator's fake says it moved. A breach is one row that breaks an invariant:

- `unbalanced`, `stale_head`, `negative`: the ledger's own checks (cauri ledger check);
- `balance_vs_postings`: a merchant's balance, as the API shows it, is not its postings' sum;
- `moved_unknown`: the operator moved money for no operation Cauri recorded;
- `moved_twice`: one operation moved money more than once at the operator (a payout, refund
  or plan refund that reached its operator twice, a customer charged twice);
- `paid_and_recredited`: the operator paid out (or refunded) what Cauri marked failed, so
  gave the money back as well;
- `taken_wrong`, `failed_not_recredited`: in the ledger, a payout that succeeded did not
  take its amount and fee exactly once, or a payout or refund that failed kept money (one
  that succeeded and took nothing is `paid_and_recredited` too);
- `collected_not_credited`: the operator collected a payment Cauri marked failed;
- `credited_not_collected`: Cauri marked succeeded what the operator never moved;
- `refund_over_payment`: the refunds of a payment took more than it (at the operator, or
  in Cauri's refunds not failed);
- `stuck_untold`: an operation still pending that no person has been told about (its
  operation is not flagged for review).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from cauri.ledger import reconciliation
from tools.chaos_campaign.campaign import Verdict
from tools.chaos_campaign.operators import Moved

SUBJECT_TABLES = {
    "payment": "SELECT id::text, status FROM payments WHERE livemode",
    "payout": "SELECT reference, status FROM payouts WHERE livemode",
    "refund": "SELECT reference, status FROM refunds WHERE livemode",
    "plan_refund": "SELECT reference, status FROM plan_refunds",
}
OPERATIONS = text(
    "SELECT id::text, connector, action, subject, subject_ref, status, operator_reference, "
    "review_required_at IS NOT NULL, request->>'refund_of' FROM operator_operations "
    "WHERE livemode"
)
# Subjects still waiting: payments, payouts and refunds pending, plan refunds pending.
WAITING = text(
    "SELECT 'payment', id::text FROM payments WHERE livemode AND status = 'pending' "
    "UNION ALL SELECT 'payout', reference FROM payouts WHERE livemode AND status = 'pending' "
    "UNION ALL SELECT 'refund', reference FROM refunds WHERE livemode AND status = 'pending' "
    "UNION ALL SELECT 'plan_refund', reference FROM plan_refunds WHERE status = 'pending'"
)
FLAGGED = text(
    "SELECT subject, subject_ref FROM operator_operations "
    "WHERE livemode AND status = 'pending' AND review_required_at IS NOT NULL"
)
REFUNDED_IN_CAURI = text(
    "SELECT p.id::text, p.amount + CASE WHEN p.fee_bearer = 'customer' THEN p.fee_amount "
    "  ELSE 0 END, sum(r.amount) FROM refunds r JOIN payments p ON p.id = r.payment_id "
    "WHERE r.status <> 'failed' GROUP BY p.id HAVING sum(r.amount) > p.amount "
    "  + CASE WHEN p.fee_bearer = 'customer' THEN p.fee_amount ELSE 0 END"
)
# What each payout and refund took from its merchant, net, in the ledger's own terms.
TAKEN = text(
    "WITH net AS (SELECT t.reference, sum(p.amount) AS amount FROM ledger_transactions t "
    "  JOIN ledger_postings p ON p.transaction_id = t.id "
    "  WHERE t.livemode AND p.account LIKE 'merchant:%' GROUP BY t.reference) "
    "SELECT 'payout', o.reference, o.status, coalesce(n.amount, 0), -(o.amount + o.fee_amount) "
    "FROM payouts o LEFT JOIN net n ON n.reference = o.reference WHERE o.livemode "
    "UNION ALL SELECT 'refund', r.reference, r.status, coalesce(n.amount, 0), NULL "
    "FROM refunds r LEFT JOIN net n ON n.reference = r.reference WHERE r.livemode"
)
AVAILABLE = text("SELECT coalesce(sum(amount), 0) FROM ledger_postings WHERE account = :account")


@dataclass(frozen=True)
class Operation:
    id: str
    connector: str
    action: str
    subject: str
    subject_ref: str
    status: str
    operator_reference: str | None
    flagged: bool
    refund_of: str | None  # a refund's collection, by the reference it was sent under

    @property
    def keys(self) -> set[str]:
        # An operator that names a refund only by its payment (Wave) is matched through it.
        refs = {self.id, self.subject_ref, self.operator_reference or "", self.refund_of or ""}
        # Orange's order_id: the reference without its dashes, 30 characters at most.
        return refs | {self.subject_ref.replace("-", "")[:30]} - {""}


async def waiting_untold(connection: AsyncConnection) -> list[tuple[str, str]]:
    """Subjects still pending with no person told: what the campaign waits on."""
    flagged = {tuple(row) for row in await connection.execute(FLAGGED)}
    return [
        (kind, ref) for kind, ref in await connection.execute(WAITING) if (kind, ref) not in flagged
    ]


async def judge(
    engine: AsyncEngine,
    read_moved: Callable[[], Awaitable[list[Moved]]],
    merchant_id: str,
    read_balance: Callable[[], Awaitable[int]],
) -> Verdict:
    """Cauri's side is read in one snapshot, taken before the operators' side is read: what
    Cauri holds as done was done at its operator before, so a notice still arriving while
    the verdict reads cannot pass for a breach."""
    verdict = Verdict()
    await _balance(engine, verdict, merchant_id, read_balance)
    async with engine.connect() as plain:
        connection = await plain.execution_options(isolation_level="REPEATABLE READ")
        await connection.execute(text("SELECT 1"))  # the snapshot starts here
        moved = await read_moved()
        await _ledger(connection, verdict)
        return await _operations(connection, verdict, moved)


async def _operations(connection: AsyncConnection, verdict: Verdict, moved: list[Moved]) -> Verdict:
    statuses = {
        (subject, ref): status
        for subject, statement in SUBJECT_TABLES.items()
        for ref, status in await connection.execute(text(statement))
    }
    operations = [Operation(*row) for row in await connection.execute(OPERATIONS)]
    against_the_operators(verdict, operations, statuses, moved)
    for payment, paid, refunded in await connection.execute(REFUNDED_IN_CAURI):
        verdict.breach("refund_over_payment", f"payment {payment}: {refunded} of {paid} refunded")
    await _taken(connection, verdict)
    for kind, ref in await waiting_untold(connection):
        verdict.breach("stuck_untold", f"{kind} {ref}")
    verdict.figures["operations"] = Counter(
        f"{op.subject} {op.connector} {op.status}" for op in operations
    )
    verdict.figures["flagged"] = sum(op.flagged and op.status == "pending" for op in operations)
    verdict.figures["subjects"] = Counter(
        f"{kind} {status}" for (kind, _), status in statuses.items()
    )
    return verdict


async def _ledger(connection: AsyncConnection, verdict: Verdict) -> None:
    findings = await reconciliation.check(connection)
    for found in findings.first:
        verdict.breach(found.check, f"{found.subject} {found.currency}: {found.found}")
    for check, count in findings.counts.items():
        verdict.breaches[check] = count  # all of them, not only the first shown
    verdict.figures["ledger"] = (
        f"{findings.transactions} transactions, {findings.postings} postings, "
        f"{findings.accounts} accounts"
    )


async def _taken(connection: AsyncConnection, verdict: Verdict) -> None:
    """A disbursement that succeeded took its money once and kept it; one that failed gave
    it all back."""
    for kind, ref, status, net, expected in await connection.execute(TAKEN):
        if status == "succeeded" and net == 0:
            verdict.breach("paid_and_recredited", f"{kind} {ref}: nothing taken in the ledger")
        elif status == "succeeded" and expected is not None and net != expected:
            verdict.breach("taken_wrong", f"{kind} {ref}: {net} taken, {expected} expected")
        elif status == "failed" and net != 0:
            verdict.breach("failed_not_recredited", f"{kind} {ref}: {net} kept")


async def _balance(
    engine: AsyncEngine,
    verdict: Verdict,
    merchant_id: str,
    read_balance: Callable[[], Awaitable[int]],
) -> None:
    """The API's balance and the postings' sum, compared when the balance read before and
    after the sum is the same (a job still settling between two reads is not a breach)."""
    account = f"merchant:{merchant_id}:available:live:XOF"
    for _ in range(50):
        shown = await read_balance()
        async with engine.connect() as connection:
            postings = int(await connection.scalar(AVAILABLE, {"account": account}) or 0)
        if await read_balance() == shown:
            break
    verdict.figures["merchant available"] = shown
    if shown != postings:
        verdict.breach("balance_vs_postings", f"API shows {shown}, postings sum to {postings}")


def against_the_operators(
    verdict: Verdict,
    operations: list[Operation],
    statuses: dict[tuple[str, str], str],
    moved: list[Moved],
) -> None:
    by_key: dict[tuple[str, str, str], Operation] = {}
    for op in operations:
        for key in op.keys:
            by_key[(op.connector, op.action, key)] = op
    times: Counter[str] = Counter()
    refunded: dict[str, Decimal] = defaultdict(Decimal)
    collected: dict[str, Decimal] = {}
    for item in moved:
        found = next((by_key[k] for k in _keys(item) if k in by_key), None)
        if found is None:
            verdict.breach("moved_unknown", f"{item.connector} {item.action} {item.keys}")
            continue
        times[found.id] += 1
        status = statuses.get((found.subject, found.subject_ref))
        if item.action == "collect":
            for key in found.keys:
                collected[key] = item.amount
            if status == "failed":
                verdict.breach("collected_not_credited", f"payment {found.subject_ref}")
        elif status == "failed":
            verdict.breach("paid_and_recredited", f"{found.subject} {found.subject_ref}")
        if item.action == "refund" and item.refunds is not None:
            refunded[item.refunds] += item.amount
    for op_id, count in times.items():
        if count > 1:
            verdict.breach("moved_twice", f"operation {op_id}: {count} times")
    for key, amount in refunded.items():
        if amount > collected.get(key, Decimal(0)):
            verdict.breach("refund_over_payment", f"{key}: {amount} refunded at the operator")
    for op in operations:
        if op.status == "succeeded" and times[op.id] == 0:
            verdict.breach(
                "credited_not_collected", f"{op.subject} {op.subject_ref} ({op.connector})"
            )
    verdict.figures["moved at the operators"] = Counter(f"{m.action} {m.connector}" for m in moved)


def _keys(item: Moved) -> list[tuple[str, str, str]]:
    return [(item.connector, item.action, key) for key in item.keys if key]
