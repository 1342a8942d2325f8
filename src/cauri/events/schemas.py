"""The event as `GET /events` shows it (spec: Events, Envelope), built by
`service.envelope`; extra keys are forbidden so that a field added there and not here fails
tests/foundation/test_openapi."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from cauri.events.types import EVENT_TYPES
from cauri.kit.openapi import Envelope


class EventObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: UUID = Field(description="Stable across retries: the key to deduplicate on.")
    event: str = Field(
        description="The event type, one of: "
        + ", ".join(f"`{type}`" for type in EVENT_TYPES)
        + ". Receivers ignore a type they do not know (new ones may be added)."
    )
    livemode: bool
    created_at: datetime
    data: dict[str, Any] = Field(
        description="The resource as the API returns it: the payment (`payment.*`; its "
        "`payment_mode` adds `country` and `country_code`), the refund (`refund.*`), the "
        "payout (`payout.*`), the checkout session (`checkout_session.*`); for "
        "`webhook.test`, `{message, sent_at}`."
    )


class EventFeedPage(Envelope[list[EventObject]]):
    """`GET /events/feed`: the test events after the cursor, in the order they committed."""

    cursor: str = Field(
        description="Where this answer ends: give it back as `cursor` to read on; keep it to "
        "resume after a break (nothing is missed, nothing repeated)."
    )
