"""A request to an operator, as stored with its operation and as handed to an adapter."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Any

from cauri.operators.protocol import Collection, Disbursement, OperatorAdapter, OperatorResult

Request = Collection | Disbursement


class Action(StrEnum):
    COLLECT = "collect"
    DISBURSE = "disburse"
    REFUND = "refund"


def encode(request: Request) -> dict[str, Any]:
    return dataclasses.asdict(request)


def decode(action: Action, stored: dict[str, Any]) -> Request:
    if action is Action.COLLECT:
        return Collection(**stored)
    return Disbursement(**stored)


async def send(adapter: OperatorAdapter, action: Action, request: Request) -> OperatorResult:
    if isinstance(request, Collection):
        return await adapter.collect(request)
    if action is Action.REFUND:
        return await adapter.refund(request)
    return await adapter.disburse(request)


async def status(adapter: OperatorAdapter, action: Action, request: Request) -> OperatorResult:
    if isinstance(request, Collection):
        return await adapter.collection_status(request)
    if action is Action.REFUND:
        return await adapter.refund_status(request)
    return await adapter.disbursement_status(request)
