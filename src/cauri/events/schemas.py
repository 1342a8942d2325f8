"""The event as `GET /events` shows it (spec: Events, Envelope), built by
`service.envelope`; extra keys are forbidden so that a field added there and not here fails
tests/foundation/test_openapi."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field


class EventObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: UUID = Field(description="Stable across retries: the key to deduplicate on.")
    event: str = Field(description="`payment.succeeded`, `refund.failed`, `payout.succeeded`…")
    livemode: bool
    created_at: datetime
    data: dict[str, Any] = Field(
        description="The resource as the API returns it (payment, refund or payout object), "
        "or the test message of `webhook.test`."
    )


class EventFeedPage(BaseModel):
    """`GET /events/feed`: the test events after the cursor, in the order they committed."""

    model_config = ConfigDict(extra="forbid")

    success: Literal[True]
    data: list[EventObject]
    cursor: str = Field(
        description="Where this answer ends: give it back as `cursor` to read on; keep it to "
        "resume after a break (nothing is missed, nothing repeated)."
    )
