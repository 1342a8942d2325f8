"""The payout batch request and the batch object (docs/API.md, "Payout batches")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from cauri.kit.request_body import RequestBody
from cauri.models import PayoutBatch

MAX_ITEMS = 1000
# The body's limit (cauri.kit.body_limit; every other route: 256 KiB). An item at its
# longest without metadata is about 2.5 KiB (external_id, beneficiary_name and reason at 255
# characters of up to 3 bytes each, its amount, number, operator and keys): 4 KiB an item
# on average leaves 1.5 KiB each for metadata, or more to the items that have less.
MAX_BODY_BYTES = MAX_ITEMS * 4 * 1024

# Each item is read on its own (cauri.payout_batches.service: one refused item never refuses
# the others), so the body takes any JSON value here; the document shows what is expected.
RawItem = Annotated[Any, WithJsonSchema({"$ref": "#/components/schemas/PayoutCreate"})]


class PayoutBatchCreate(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "external_id": "salaires-2026-11",
                    "items": [
                        {
                            "amount": 5000,
                            "operator": "mtn",
                            "phone_number": "22997000000",
                            "beneficiary_name": "Koffi Mensah",
                            "external_id": "salaires-2026-11-001",
                        },
                        {
                            "amount": 7500,
                            "operator": "orange_ci",
                            "phone_number": "2250700000000",
                            "external_id": "salaires-2026-11-002",
                        },
                    ],
                }
            ]
        }
    )

    # Makes the call idempotent: the same value returns the batch made first (200).
    external_id: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    items: Annotated[
        list[RawItem],
        Field(
            min_length=1,
            max_length=MAX_ITEMS,
            description="1 to 1,000 bodies of `POST /payouts`, each with its own "
            "`external_id`; each is validated on its own, and a refused one is reported "
            "with its error while the others go on.",
        ),
    ]


@dataclass(frozen=True)
class Counts:
    """How a batch's items stand: made into a payout (by its status), refused, or not made
    yet."""

    total: int = 0
    queued: int = 0
    refused: int = 0
    pending: int = 0
    succeeded: int = 0
    failed: int = 0

    @property
    def final(self) -> bool:
        return self.queued == 0 and self.pending == 0


@dataclass(frozen=True)
class Item:
    external_id: str | None
    payout: str | None
    error: dict[str, Any] | None


def batch_object(
    batch: PayoutBatch, counts: Counts, items: Sequence[Item] | None = None
) -> dict[str, Any]:
    """The batch; `items` only where one batch is asked for (its creation and
    `GET /payout-batches/{reference}`), as a plan's `payments` (spec)."""
    shown: dict[str, Any] = {
        "reference": batch.reference,
        "external_id": batch.external_id,
        "status": batch.status,
        "livemode": batch.livemode,
        "counts": {
            "total": counts.total,
            "queued": counts.queued,
            "refused": counts.refused,
            "pending": counts.pending,
            "succeeded": counts.succeeded,
            "failed": counts.failed,
        },
        "created_at": batch.created_at.isoformat(),
        "completed_at": batch.completed_at.isoformat() if batch.completed_at else None,
    }
    if items is not None:
        shown["items"] = [
            {"external_id": item.external_id, "payout": item.payout, "error": item.error}
            for item in items
        ]
    return shown


class ErrorObject(BaseModel):
    code: str
    message: str
    details: dict[str, list[str]] | None = Field(
        default=None, description="Validation errors only: field name to messages."
    )
    reference: str | None = Field(
        default=None,
        description="The payout recorded `failed` when its operator refused it at once.",
    )


class ItemObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    external_id: str | None = Field(description="The item's own, as sent (null if none).")
    payout: str | None = Field(
        description="The reference of the payout made for the item; null while it is "
        "queued, or when it was refused."
    )
    error: ErrorObject | None = Field(
        description="Why the item was refused, as `POST /payouts` would have answered; "
        "null otherwise."
    )


class CountsObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    total: int = Field(description="Items in the batch.")
    queued: int = Field(description="Items not made into a payout yet.")
    refused: int = Field(description="Items refused, each with its `error`.")
    pending: int = Field(description="Items whose payout is pending (held ones included).")
    succeeded: int = Field(description="Items whose payout succeeded.")
    failed: int = Field(description="Items whose payout failed.")


class PayoutBatchObject(BaseModel):
    """A payout batch, as `batch_object` builds it; extra keys are forbidden so that a field
    added there and not here fails tests/foundation/test_openapi."""

    model_config = ConfigDict(extra="forbid")

    reference: str = Field(pattern="^pyb_")
    external_id: str
    status: Literal["processing", "completed"] = Field(
        description="`completed` once every item is refused or has a final payout."
    )
    livemode: bool
    counts: CountsObject
    created_at: datetime
    completed_at: datetime | None
    items: list[ItemObject] | None = Field(
        default=None,
        description="In the order sent; on the creation's answer and "
        "`GET /payout-batches/{reference}` only.",
    )
