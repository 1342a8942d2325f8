"""Issue 26: a merchant's team finds its payments, plans, payouts and refunds, live under
/dashboard/… and test under /dashboard/test/…, and reads each one's story; nothing of another
merchant's, nor of the other environment, is ever shown (the isolation walk)."""

from __future__ import annotations

import re

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_member
from tests.staff.traffic import A_NUMBER, Traffic, traffic

KINDS = ("payments", "plans", "payouts", "refunds")


async def _member_of(dashboard: ConsoleClient, runtime: Runtime, seen: Traffic) -> None:
    await dashboard.signed_in_as(await make_member(runtime, seen.shop.id, "lecture@shop.example"))


def _found(page: httpx.Response, base: str, kind: str) -> list[str]:
    """The references a search page lists, in its order."""
    assert page.status_code == 200, page.text
    return re.findall(rf'<th scope="row"><a href="{base}/{kind}/([^"]+)">', page.text)


def _references(seen: Traffic) -> dict[str, dict[str, list[str]]]:
    """Per kind, the shop's references by environment, and the other merchant's."""
    return {
        "payments": {
            "test": [
                seen.paid["reference"],
                seen.refused["reference"],
                seen.pending["reference"],
                seen.instalment,
            ],
            "live": [seen.live["reference"]],
            "other": [seen.others["reference"]],
        },
        "plans": {"test": [seen.plan["reference"]], "live": [], "other": []},
        "payouts": {
            "test": [seen.payout["reference"], seen.held["reference"]],
            "live": [],
            "other": [],
        },
        "refunds": {"test": [seen.refund["reference"]], "live": [], "other": []},
    }


async def test_each_environment_lists_the_merchants_own_rows_only(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    seen = await traffic(client, runtime, clock)
    await _member_of(dashboard, runtime, seen)
    for kind, references in _references(seen).items():
        test_rows = _found(await dashboard.get(f"/dashboard/test/{kind}"), "/dashboard/test", kind)
        live_rows = _found(await dashboard.get(f"/dashboard/{kind}"), "/dashboard", kind)
        assert sorted(test_rows) == sorted(references["test"]), kind
        assert sorted(live_rows) == sorted(references["live"]), kind


async def test_searches_by_external_id_last_digits_and_status(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    seen = await traffic(client, runtime, clock)
    await _member_of(dashboard, runtime, seen)
    base = "/dashboard/test"
    # The other merchant's payment has the same external_id: not the shop's.
    by_external = await dashboard.get(f"{base}/payments?external_id=order-paid")
    assert _found(by_external, base, "payments") == [seen.paid["reference"]]
    by_digits = await dashboard.get(f"{base}/payments?phone_digits={A_NUMBER[-6:]}")
    assert _found(by_digits, base, "payments") == [seen.paid["reference"]]
    failed = await dashboard.get(f"{base}/payments?status=failed")
    assert _found(failed, base, "payments") == [seen.refused["reference"]]
    wrong = await dashboard.get(f"{base}/payments?phone_digits=12")
    assert wrong.status_code == 422 and 'id="f-phone_digits-error"' in wrong.text


async def test_a_payments_page_tells_its_story_without_the_platforms_ledger(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    seen = await traffic(client, runtime, clock)
    await _member_of(dashboard, runtime, seen)
    page = await dashboard.get(f"/dashboard/test/payments/{seen.paid['reference']}")
    assert page.status_code == 200, page.text
    assert "payment.succeeded" in page.text and "Remboursements de ce paiement" in page.text
    assert seen.refund["reference"] in page.text
    assert 'id="ledger"' not in page.text and "Marchand" not in page.text
    refused = await dashboard.get(f"/dashboard/test/payments/{seen.refused['reference']}")
    assert "Motif de l'échec" in refused.text


async def test_the_isolation_walk_another_merchants_or_environments_reference_is_a_404(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    seen = await traffic(client, runtime, clock)
    await _member_of(dashboard, runtime, seen)
    walked = 0
    for kind, references in _references(seen).items():
        for environment, refs in references.items():
            for reference in refs:
                own_base = {"test": "/dashboard/test", "live": "/dashboard"}.get(environment)
                for base in ("/dashboard", "/dashboard/test"):
                    answer = await dashboard.get(f"{base}/{kind}/{reference}")
                    expected = 200 if base == own_base else 404
                    assert answer.status_code == expected, (kind, environment, base, reference)
                    walked += 1
    assert walked >= 16
    unknown = await dashboard.get("/dashboard/payments/00000000-0000-0000-0000-000000000000")
    assert unknown.status_code == 404 and "introuvable" in unknown.text
