"""The failover campaign's verdict catches what it is there to catch (tools/failover_campaign):
each breach planted on its own, so that a run that passes could have failed."""

from __future__ import annotations

from tools.chaos_campaign.campaign import Verdict
from tools.failover_campaign.clients import Acknowledged, Tally
from tools.failover_campaign.verdict import State, check_notifications, check_operations

EXTERNAL, REFERENCE = "failover-1", "a1b2c3d4-0000-4000-8000-000000000001"


def _tally(*acknowledged: str) -> Tally:
    tally = Tally(sent={EXTERNAL: "payment", "failover-2": "payout"})
    tally.acknowledged += [Acknowledged("payment", EXTERNAL, ref, 0.0, 0.1) for ref in acknowledged]
    return tally


def _state(rows: dict[str, list[tuple[str, str, str]]], **events: str | None) -> State:
    return State(rows=rows, events=dict(events), jobs={})


def _operations(state: State, tally: Tally) -> Verdict:
    verdict = Verdict()
    check_operations(verdict, state, tally)
    return verdict


def test_an_operation_held_once_as_acknowledged_is_no_breach() -> None:
    state = _state({EXTERNAL: [("payment", REFERENCE, "succeeded")]})
    assert _operations(state, _tally(REFERENCE)).breaches == {}


def test_an_acknowledged_operation_the_new_primary_lacks_is_lost() -> None:
    assert _operations(_state({}), _tally(REFERENCE)).breaches == {"lost": 1}
    other = _state({EXTERNAL: [("payment", "another", "succeeded")]})
    assert _operations(other, _tally(REFERENCE)).breaches["lost"] == 1


def test_one_external_id_made_twice_or_acknowledged_under_two_references_is_duplicated() -> None:
    twice = [("payment", REFERENCE, "succeeded"), ("payment", "another", "succeeded")]
    assert _operations(_state({EXTERNAL: twice}), _tally(REFERENCE)).breaches == {"duplicated": 1}
    once = _state({EXTERNAL: [("payment", REFERENCE, "succeeded")]})
    assert _operations(once, _tally(REFERENCE, "another")).breaches == {
        "duplicated": 1,
        "lost": 1,
    }


def test_rows_nobody_asked_for_pending_ones_and_unacknowledged_requests_are_breaches() -> None:
    state = _state({"stranger": [("payout", "po_1", "pending")]})
    tally = _tally()
    tally.refused.append("payment failover-1: 422")
    tally.abandoned.append("payout failover-2")
    assert _operations(state, tally).breaches == {
        "unknown": 1,
        "stuck": 1,
        "refused": 1,
        "abandoned": 1,
    }


def test_every_event_is_delivered_and_received_and_nothing_else_is() -> None:
    verdict = Verdict()
    state = _state({}, e1="success", e2="pending", e3=None, e4="success")
    check_notifications(verdict, state, received={"e1", "e2", "e5"})
    # e2 and e3 not delivered, e4 delivered by Cauri's count but never received, e5 unknown.
    assert verdict.breaches == {"undelivered": 3, "phantom": 1}
