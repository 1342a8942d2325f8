"""Who calls the API: an account in one environment. Its own module, free of the web
framework, so that the services taking it can be used where no request is (the command
line, the worker)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    merchant_id: str
    livemode: bool
