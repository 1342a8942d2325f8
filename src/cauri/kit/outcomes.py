"""Operations counted by outcome: the staff's traffic of the day (per operator, per
connector) and a merchant's payments on its home page. One shape and one set of aggregates,
whatever is counted and however it is grouped."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, SQLColumnExpression, func


@dataclass(frozen=True)
class Tally:
    """Amounts in minor units; `failed` and `succeeded` are the decided ones, the rest of
    `count` still pending."""

    count: int
    succeeded: int
    failed: int
    succeeded_amount: int

    @property
    def success_rate(self) -> float | None:
        """Over those decided; None while none is."""
        decided = self.succeeded + self.failed
        return None if decided == 0 else self.succeeded / decided


_Count = ColumnElement[int]


def tally_columns(
    status: SQLColumnExpression[str],
    amount: SQLColumnExpression[int],
    succeeded: ColumnElement[bool],
) -> tuple[_Count, _Count, _Count, _Count]:
    """The aggregates a `Tally` is made of, in its fields' order, for one GROUP BY."""
    return (
        func.count(),
        func.count().filter(succeeded),
        func.count().filter(status == "failed"),
        func.coalesce(func.sum(amount).filter(succeeded), 0),
    )
