"""The base of every request body: a field the model does not declare is refused (422
`invalid_request`, "Champ inconnu."), never ignored, so that money never moves on a
misunderstanding (a misspelt `amount` on a refund would otherwise refund everything).
Free-form objects (`metadata`) are plain dicts, not models, and stay free."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
