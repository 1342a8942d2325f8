"""Request bodies and response objects (spec: Webhook endpoint configuration, delivery log)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from cauri.kit.request_body import RequestBody
from cauri.models import WebhookDelivery
from cauri.webhooks.url_safety import MAX_URL_LENGTH


class EndpointUpdate(RequestBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"url": "https://boutique.example/webhooks/cauri", "rotate_secret": False}]
        }
    )

    # null disables notifications; leaving `url` out keeps it (e.g. to only rotate the secret).
    url: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_URL_LENGTH)] | None
    ) = None
    rotate_secret: bool = False

    @property
    def url_given(self) -> bool:
        return "url" in self.model_fields_set


def endpoint_object(url: str | None, secret: str) -> dict[str, Any]:
    return {"url": url, "secret": secret}


@dataclass(frozen=True)
class LoggedDelivery:
    """A delivery as its log shows it, with what is read from its event and its attempts."""

    delivery: WebhookDelivery
    resource: str | None  # the `reference` in the event's data; none for webhook.test
    last_error: str | None  # the last attempt's error ("Réponse HTTP 500.", a timeout…)


def delivery_entry(logged: LoggedDelivery) -> dict[str, Any]:
    delivery = logged.delivery
    next_attempt = delivery.next_attempt_at
    return {
        "id": str(delivery.id),
        "event": delivery.event,
        "resource": logged.resource,
        "url": delivery.url,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "response_code": delivery.response_code,
        "last_error": logged.last_error,
        "next_attempt_at": next_attempt.isoformat() if next_attempt else None,
        "created_at": delivery.created_at.isoformat(),
        "delivered_at": delivery.delivered_at.isoformat() if delivery.delivered_at else None,
    }


# What the webhook routes answer, as the OpenAPI document shows it; extra keys are forbidden
# so that a field added to the builders above and not here fails tests/foundation/test_openapi.


class EndpointObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(description="null: notifications are disabled.")
    secret: str = Field(description="The signing secret of this environment's notifications.")


class DeliveryEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: UUID = Field(description="The notification's id, sent as X-Service-Delivery.")
    event: str
    resource: str | None = Field(
        description="The reference of the payment, payout or refund the event is about; "
        "null for webhook.test."
    )
    url: str
    status: Literal["pending", "success", "failed"]
    attempts: int = Field(ge=0)
    response_code: int | None = Field(description="The HTTP status of the last attempt.")
    last_error: str | None = Field(
        description="What went wrong on the last attempt (an HTTP status, a timeout, a "
        "refused address); null when it succeeded or none was made."
    )
    next_attempt_at: datetime | None = Field(
        description="When the next attempt is due; null unless the delivery is pending."
    )
    created_at: datetime
    delivered_at: datetime | None


class TestSent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sent: bool = Field(description="false: no endpoint is configured; `reason` says so.")
    delivery_id: UUID
    url: str | None
    reason: str | None = Field(None, description="Why nothing was sent.")
