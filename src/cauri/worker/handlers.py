"""Job kinds and the domain task that handles each."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.runtime import Runtime

Handler = Callable[[AsyncSession, Runtime, dict[str, Any]], Awaitable[None]]


def all_handlers() -> Mapping[str, Handler]:
    from cauri.payments.tasks import HANDLERS as payment_handlers

    return {**payment_handlers}
