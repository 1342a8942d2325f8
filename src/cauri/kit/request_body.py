"""The base of every request body: a field the model does not declare is refused (422
`invalid_request`, "Champ inconnu."), never ignored, so that money never moves on a
misunderstanding (a misspelt `amount` on a refund would otherwise refund everything).
Free-form objects (`metadata`) are plain dicts, not models, and stay free."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from cauri.kit.validation_messages import validation_error


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> Self:
        """The body a page's form describes, refused as the API refuses the same JSON (422
        `invalid_request`, each field's message)."""
        try:
            return cls.model_validate(fields)
        except ValidationError as error:
            raise validation_error(error) from error
