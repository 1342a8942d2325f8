"""Job kinds and the domain task that handles each."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.config import get_settings
from cauri.runtime import Runtime

Handler = Callable[[AsyncSession, Runtime, dict[str, Any]], Awaitable[None]]


def all_handlers() -> Mapping[str, Handler]:
    from cauri.calls.tasks import HANDLERS as call_handlers
    from cauri.payments.tasks import HANDLERS as payment_handlers
    from cauri.payouts.tasks import HANDLERS as payout_handlers
    from cauri.plans.tasks import HANDLERS as plan_handlers
    from cauri.refunds.tasks import HANDLERS as refund_handlers
    from cauri.webhooks.tasks import HANDLERS as webhook_handlers

    return {
        **call_handlers,
        **payment_handlers,
        **payout_handlers,
        **plan_handlers,
        **refund_handlers,
        **webhook_handlers,
        **_extra_handlers(get_settings().extra_job_handlers),
    }


def _extra_handlers(spec: str | None) -> Mapping[str, Handler]:
    """CAURI_EXTRA_JOB_HANDLERS="package.module:NAME" adds the kinds of that mapping."""
    if not spec:
        return {}
    module_name, _, attribute = spec.partition(":")
    handlers: Mapping[str, Handler] = getattr(importlib.import_module(module_name), attribute)
    return handlers
