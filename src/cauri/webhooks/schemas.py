"""Request bodies and response objects (spec: Webhook endpoint configuration, delivery log)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, StringConstraints

from cauri.models import WebhookDelivery, WebhookEndpoint
from cauri.webhooks.url_safety import MAX_URL_LENGTH


class EndpointUpdate(BaseModel):
    # null disables notifications; leaving `url` out keeps it (e.g. to only rotate the secret).
    url: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_URL_LENGTH)] | None
    ) = None
    rotate_secret: bool = False

    @property
    def url_given(self) -> bool:
        return "url" in self.model_fields_set


def endpoint_object(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {"url": endpoint.url, "secret": endpoint.secret}


def delivery_entry(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": str(delivery.id),
        "event": delivery.event,
        "url": delivery.url,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "response_code": delivery.response_code,
        "created_at": delivery.created_at.isoformat(),
        "delivered_at": delivery.delivered_at.isoformat() if delivery.delivered_at else None,
    }
