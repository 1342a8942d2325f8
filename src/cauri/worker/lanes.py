"""Job lanes: money jobs never wait behind webhook deliveries, live jobs never behind test.

A job's lane is decided at enqueue from its kind's family and its environment and stored on
its row; the worker claims each lane separately, within that lane's share of its
concurrency, so a backlog in one lane cannot take another lane's slots. Every kind but a
webhook delivery is a money job (payout sends, refunds, plan expiry and plan refunds,
status checks and operator status queries).
"""

from __future__ import annotations

from enum import StrEnum


class Family(StrEnum):
    MONEY = "money"
    WEBHOOKS = "webhooks"


MONEY_LIVE = "money-live"
MONEY_TEST = "money-test"
WEBHOOKS_LIVE = "webhooks-live"
WEBHOOKS_TEST = "webhooks-test"

# Each lane's share of a worker's concurrency. Deliveries wait on the network and hold no
# database connection meanwhile, so their live lane gets the largest share.
SHARES = {MONEY_LIVE: 0.25, MONEY_TEST: 0.125, WEBHOOKS_LIVE: 0.5, WEBHOOKS_TEST: 0.125}

# Lanes whose jobs carry a group (a webhook endpoint), claimed under the per-group cap.
GROUPED = frozenset({WEBHOOKS_LIVE, WEBHOOKS_TEST})


def lane_of(family: Family, *, livemode: bool) -> str:
    if family is Family.WEBHOOKS:
        return WEBHOOKS_LIVE if livemode else WEBHOOKS_TEST
    return MONEY_LIVE if livemode else MONEY_TEST


def slots(concurrency: int) -> dict[str, int]:
    """Each lane's slots in a worker of this concurrency: at least one, so no lane stops."""
    return {lane: max(1, int(concurrency * share)) for lane, share in SHARES.items()}
