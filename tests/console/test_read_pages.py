"""Issue 14, the console's read pages over real HTTP, on data made through the API: the
overview, the searches of payments, plans, payouts and refunds and their detail pages, the
merchants, the ledger with its reconciliation check, and the CSV exports."""

from __future__ import annotations

import csv
import html
import io
import re
from decimal import Decimal
from typing import Any

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.staff import kinds
from cauri.worker.runner import Worker
from tests.audit.builders import entries
from tests.calls.builders import SUCCEEDED, ScriptedNetwork
from tests.console.builders import ConsoleClient, make_staff
from tests.console.test_sign_in import assert_secured
from tests.payouts.builders import SUCCEEDS, set_limits, top_up
from tests.staff.test_exports import _listed, _total
from tests.staff.traffic import (
    API,
    PENDING_NUMBER,
    REFUSED_NUMBER,
    Traffic,
    pay,
    to_noon_tomorrow,
    traffic,
)
from tests.support import MerchantKeys, make_merchant, momo_body
from tests.webhooks.builders import set_endpoint
from tests.webhooks.receiver import Receiver

LIVE_NUMBER = "22997123456"


async def _as(console: ConsoleClient, runtime: Runtime, role: str) -> ConsoleClient:
    await console.signed_in_as(await make_staff(runtime, f"{role}@cauri.example", role))
    return console


def _text(page: httpx.Response) -> str:
    """The page's text, tags and entities aside, spaces as one."""
    plain = html.unescape(re.sub(r"<[^>]+>", " ", page.text))
    return re.sub(r"\s+", " ", plain.replace("\u202f", " ").replace("\u00a0", " "))


def _by_id(page: httpx.Response, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</', page.text, re.S)
    assert found is not None, page.text
    return html.unescape(found.group(1)).strip()


def _field_error(page: httpx.Response, field: str) -> str:
    return _by_id(page, f"f-{field}-error")


def _found(page: httpx.Response, kind: str) -> list[str]:
    """The references a search page lists, in its order."""
    assert page.status_code == 200, page.text
    return re.findall(rf'<th scope="row"><a href="/console/{kind}/([^"]+)">', page.text)


async def test_overview_shows_todays_traffic_and_what_needs_someone(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    console: ConsoleClient,
) -> None:
    to_noon_tomorrow(clock)
    shop = await make_merchant(runtime, name="Boutique Awa")
    clock.advance(hours=-2)
    stuck = await pay(client, shop, phone_number=PENDING_NUMBER, external_id="stuck")
    clock.advance(hours=2)
    await pay(client, shop, amount=2500, external_id="paid")
    await pay(client, shop, phone_number=REFUSED_NUMBER, external_id="refused")
    await set_limits(runtime, shop.id, approval_threshold=1000)
    await top_up(runtime, shop.id, 10_000, livemode=True)
    runtime.operators.live_adapters["mtn"] = runtime.operators.simulator
    held = await client.post(
        f"{API}/payouts",
        json={"amount": 2000, "phone_number": SUCCEEDS, "operator": "mtn"},
        headers=shop.headers(livemode=True),
    )
    assert held.json()["data"]["awaiting_approval"] is True, held.text

    await _as(console, runtime, "viewer")
    page = await console.get("/console/")
    assert page.status_code == 200
    assert_secured(page)
    assert _by_id(page, "approvals-count") == "1"
    assert '<a href="/console/approvals"><strong id="approvals-count">' in page.text
    assert _by_id(page, "stuck-count") == "1"
    assert _by_id(page, "review-count") == "0"
    assert "Aucune opération à examiner." in page.text
    assert f'href="/console/payouts/{held.json()["data"]["reference"]}"' in page.text
    assert f'href="/console/payments/{stuck["reference"]}"' in page.text
    text = _text(page)
    # mtn in test: three payments, one succeeded (2 500), one failed: 50 % of those decided.
    assert "mtn test 3 1 1 2 500 XOF 50,0 %" in text
    assert "simulator test 3 1 1 2 500 XOF 50,0 %" in text
    assert "Connecté en tant que viewer@cauri.example" in text


async def test_searches_by_each_filter(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    console: ConsoleClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = await traffic(client, runtime, clock)
    await _as(console, runtime, "viewer")

    everything = await console.get("/console/payments")
    assert len(_found(everything, "payments")) == 6  # the instalment included
    assert "Paiements trouvés : 6" in _text(everything)
    both = _found(await console.get("/console/payments?external_id=order-paid"), "payments")
    assert both == [seen.others["reference"], seen.paid["reference"]]  # newest first
    shop_only = f"/console/payments?external_id=order-paid&merchant={seen.shop.id}"
    assert _found(await console.get(shop_only), "payments") == [seen.paid["reference"]]
    failed = await console.get("/console/payments?status=failed")
    assert _found(failed, "payments") == [seen.refused["reference"]]
    assert '<option value="failed" selected>échoué</option>' in failed.text
    live = _found(await console.get("/console/payments?mode=live"), "payments")
    assert live == [seen.live["reference"]]
    day = seen.others["created_at"][:10]
    assert _found(await console.get(f"/console/payments?from={day}"), "payments") == [
        seen.others["reference"]
    ]
    by_identifier = await console.get(f"/console/payments?reference={seen.paid['identifier']}")
    assert _found(by_identifier, "payments") == [seen.paid["reference"]]

    plans = await console.get("/console/plans?external_id=plan-1")
    assert _found(plans, "plans") == [seen.plan["reference"]]
    payouts = await console.get("/console/payouts?status=pending")
    assert _found(payouts, "payouts") == [seen.held["reference"]]
    refunds = await console.get("/console/refunds?external_id=order-paid")
    assert _found(refunds, "refunds") == [seen.refund["reference"]]
    assert "400 XOF" in _text(refunds)

    monkeypatch.setattr(kinds, "PER_PAGE", 3)
    first = await console.get("/console/payments?mode=test")
    assert "page 1 sur 2" in _text(first)
    assert 'href="/console/payments?mode=test&amp;page=2" rel="next"' in first.text
    second = await console.get("/console/payments?mode=test&page=2")
    assert len(_found(second, "payments")) == 2  # five in test mode
    assert set(_found(first, "payments")).isdisjoint(_found(second, "payments"))


async def test_last_digits_are_a_support_lookup(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, server: Any
) -> None:
    seen = await traffic(client, runtime, clock)
    async with ConsoleClient.of(server) as viewer:
        await _as(viewer, runtime, "viewer")
        form = await viewer.get("/console/payments")
        assert 'name="phone_digits"' not in form.text
        refused = await viewer.get("/console/payments?phone_digits=0002")
        assert refused.status_code == 422
        assert (
            '<p class="alert" role="alert">Votre rôle (lecture seule) ne permet pas de '
            "rechercher des paiements.</p>" in refused.text
        )
    async with ConsoleClient.of(server) as support:
        await _as(support, runtime, "support")
        found = await support.get(f"/console/payments?phone_digits={PENDING_NUMBER[-6:]}")
        assert _found(found, "payments") == [seen.pending["reference"]]
        assert 'id="f-phone_digits" name="phone_digits" type="text" value="330002"' in found.text


async def test_a_bad_filter_is_shown_next_to_its_field(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, console: ConsoleClient
) -> None:
    """Status 422 with the form, the values as typed, never a 500."""
    await traffic(client, runtime, clock)
    await _as(console, runtime, "support")

    status = await console.get("/console/payouts?status=nope")
    assert status.status_code == 422
    assert_secured(status)
    assert _field_error(status, "status") == "Statut inconnu : nope."
    assert 'aria-describedby="f-status-error" aria-invalid="true"' in status.text
    dates = await console.get("/console/refunds?from=31/12/2026&to=demain")
    assert dates.status_code == 422
    assert (
        _field_error(dates, "from") == "« 31/12/2026 » n'est ni une date ni un horodatage ISO 8601."
    )
    assert _field_error(dates, "to") == "« demain » n'est ni une date ni un horodatage ISO 8601."
    assert 'value="31/12/2026"' in dates.text
    digits = await console.get("/console/payments?phone_digits=12")
    assert _field_error(digits, "phone_digits") == "Donnez de 4 à 15 chiffres, la fin du numéro."
    merchant = await console.get("/console/plans?merchant=mch_nobody")
    assert _field_error(merchant, "merchant") == "Marchand introuvable : mch_nobody."
    mode = await console.get("/console/payments?mode=prod")
    assert _field_error(mode, "mode") == "Mode inconnu : prod (test ou live)."
    page = await console.get("/console/payments?page=0")
    assert page.status_code == 422 and "Numéro de page invalide : 0." in page.text
    missing = await console.get("/console/payments/not-a-payment")
    assert missing.status_code == 404
    assert "Paiement introuvable : not-a-payment." in missing.text


async def _live_payment_with_its_trail(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, clock: ManualClock
) -> tuple[MerchantKeys, dict[str, Any], dict[str, Any], str]:
    """A live payment through a connector, refunded in part, each event sent to an endpoint
    nobody listens on (one failed attempt each)."""
    runtime.operators.live_adapters["mtn"] = ScriptedNetwork(send={LIVE_NUMBER: SUCCEEDED})
    merchant = await make_merchant(runtime, name="Boutique Awa")
    with Receiver() as gone:
        url = gone.url
    await set_endpoint(client, merchant, url, livemode=True)
    live = merchant.headers(livemode=True)
    paid = await client.post(
        f"{API}/payments", json=momo_body(phone_number=LIVE_NUMBER), headers=live
    )
    payment = paid.json()["data"]
    clock.advance(seconds=1)
    refunded = await client.post(
        f"{API}/payments/{payment['reference']}/refund", json={"amount": 300}, headers=live
    )
    await worker.drain()
    return merchant, payment, refunded.json()["data"], url


async def test_a_payment_detail_shows_postings_exchanges_events_and_deliveries(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    clock: ManualClock,
    console: ConsoleClient,
) -> None:
    merchant, payment, refund, url = await _live_payment_with_its_trail(
        client, runtime, worker, clock
    )
    await _as(console, runtime, "viewer")
    page = await console.get(f"/console/payments/{payment['identifier']}")
    assert page.status_code == 200, page.text
    text = _text(page)
    assert f"Paiement {payment['reference']}" in text
    assert _by_id(page, "status") == "réussi"
    assert "Remboursé 300 XOF" in text
    assert f'href="/console/refunds/{refund["reference"]}"' in page.text
    # The ledger: both transactions with their postings, signed.
    assert f"merchant:{merchant.id}:available:live:XOF 1 000 XOF" in text
    assert "operator:mtn:clearing:live:XOF -1 000 XOF" in text
    assert f"merchant:{merchant.id}:available:live:XOF -300 XOF" in text
    # The operations, with their HTTP exchanges.
    assert "collect · mtn" in text and "refund · mtn" in text
    assert text.count("Échanges HTTP") == 2
    # The events, each with its delivery and its failed attempt.
    assert "payment.succeeded" in text and "refund.succeeded" in text
    assert text.count(f"Adresse {url}") == 2
    assert text.count("Tentatives de livraison (1)") == 2
    assert "Échec de connexion" in text

    refund_page = await console.get(f"/console/refunds/{refund['reference']}")
    assert refund_page.status_code == 200
    assert f'href="/console/payments/{payment["reference"]}"' in refund_page.text
    assert "refund.succeeded" in refund_page.text and "payment.succeeded" not in refund_page.text


async def test_each_detail_page_renders(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, console: ConsoleClient
) -> None:
    seen: Traffic = await traffic(client, runtime, clock)
    await _as(console, runtime, "viewer")
    plan = await console.get(f"/console/plans/{seen.plan['reference']}")
    assert plan.status_code == 200
    assert f'href="/console/payments/{seen.instalment}"' in plan.text
    assert "Versements (1)" in _text(plan)
    payout = await console.get(f"/console/payouts/{seen.payout['reference']}")
    assert payout.status_code == 200
    assert "Transfert " + seen.payout["reference"] in _text(payout)
    assert "payout.succeeded" in payout.text
    assert "le mode test passe par le simulateur" in payout.text
    assert (await console.get(f"/console/payouts/{seen.held['reference']}")).status_code == 200
    assert (await console.get("/console/refunds/nothing")).status_code == 404


async def test_merchants_list_search_and_page(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, console: ConsoleClient
) -> None:
    seen = await traffic(client, runtime, clock)
    await set_limits(runtime, seen.shop.id, per_payout=50_000, approval_threshold=20_000)
    with Receiver() as receiver:
        await set_endpoint(client, seen.shop, receiver.url)
    await _as(console, runtime, "viewer")

    listed = await console.get("/console/merchants")
    assert "Marchands trouvés : 2" in _text(listed)
    found = await console.get("/console/merchants?q=awa")
    assert f'href="/console/merchants/{seen.shop.id}"' in found.text
    assert seen.other.id not in found.text
    by_id = await console.get(f"/console/merchants?q={seen.other.id}")
    assert f'href="/console/merchants/{seen.other.id}"' in by_id.text
    assert "Marchands trouvés : 0" in _text(await console.get("/console/merchants?q=%25"))
    bad = await console.get("/console/merchants?status=closed")
    assert bad.status_code == 422
    assert _field_error(bad, "status") == "Statut inconnu : closed."

    page = await console.get(f"/console/merchants/{seen.shop.id}")
    assert page.status_code == 200
    text = _text(page)
    assert _by_id(page, "merchant-status") == "actif"
    assert "Plafond par transfert 50 000 XOF" in text
    assert "Approbation au-delà de 20 000 XOF" in text
    assert f"test {receiver.url}" in text
    assert seen.shop.test_key[-4:] in text  # its hint
    assert seen.shop.test_key not in page.text  # never the key
    assert "/actions" not in page.text  # a viewer is not offered the administration
    # 1000 paid + 2000 instalment's (held by the plan) - 400 refunded + 10 000 topped up
    # - the payout and the held one with their fees
    assert re.search(r"test XOF [0-9 ]+ XOF 2 000 XOF", text), text
    assert (await console.get("/console/merchants/mch_nobody")).status_code == 404


async def test_ledger_page_and_the_reconciliation_run(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    console: ConsoleClient,
    server: Any,
) -> None:
    seen = await traffic(client, runtime, clock)
    await _as(console, runtime, "viewer")
    page = await console.get("/console/ledger")
    assert page.status_code == 200
    assert _by_id(page, "reconciliation-result") == "Aucune vérification n'a encore été faite."
    assert "Lancer la vérification" not in page.text
    text = _text(page)
    assert f"merchant:{seen.shop.id}:available:test:XOF disponible {seen.shop.id} test" in text
    csrf = await console.csrf_of("/console/ledger")
    refused = await console.post("/console/ledger/check", {"csrf": csrf})
    assert refused.status_code == 403
    assert "exporter des données" in refused.text and "de exporter" not in refused.text
    assert await entries(runtime) == []

    async with ConsoleClient.of(server) as finance:
        await _as(finance, runtime, "finance")
        csrf = await finance.csrf_of("/console/ledger")
        ran = await finance.post("/console/ledger/check", {"csrf": csrf})
        assert ran.status_code == 303
        assert ran.headers["location"] == "/console/ledger#reconciliation"
        after = await finance.get("/console/ledger")
        result = _by_id(after, "reconciliation-result")
        assert result.startswith("Réussie le ") and result.endswith(" UTC")
        assert "Transactions vérifiées" in after.text
        assert (await finance.post("/console/ledger/check", {})).status_code == 403  # no CSRF
    [run] = await entries(runtime)
    assert (run["action"], run["actor_name"]) == ("ledger.reconcile", "finance@cauri.example")
    assert run["resource_type"] == "reconciliation" and run["before"] is None
    assert run["after"] == {
        "passed": True,
        "transactions": run["after"]["transactions"],
        "discrepancies": 0,
    }
    assert run["after"]["transactions"] > 0


def _csv(response: httpx.Response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.text)))


async def test_exports_are_for_finance_and_match_the_api(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    console: ConsoleClient,
    server: Any,
) -> None:
    seen = await traffic(client, runtime, clock)
    day = seen.paid["created_at"][:10]
    query = f"from={day}&to={day}&merchant={seen.shop.id}&mode=test"
    await _as(console, runtime, "viewer")
    assert (await console.get("/console/exports")).status_code == 403
    viewer_download = await console.get(f"/console/exports/download?kind=payments&{query}")
    assert viewer_download.status_code == 403
    assert "exporter des données" in viewer_download.text
    assert 'href="/console/exports"' not in (await console.get("/console/")).text

    async with ConsoleClient.of(server) as finance:
        await _as(finance, runtime, "finance")
        form = await finance.get("/console/exports")
        assert form.status_code == 200 and 'href="/console/exports"' in form.text
        period = {"from": day, "to": day}
        for kind in ("payments", "payouts", "refunds"):
            answer = await finance.get(f"/console/exports/download?kind={kind}&{query}")
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-type"] == "text/csv; charset=utf-8"
            assert answer.headers["content-disposition"] == (
                f'attachment; filename="cauri-{kind}-{day}-{day}-{seen.shop.id}-test.csv"'
            )
            assert_secured(answer)
            rows = _csv(answer)
            listed = await _listed(client, seen.shop, kind, period)
            assert sorted(row["reference"] for row in rows) == sorted(
                str(row["reference"]) for row in listed
            )
            assert _total(rows, "amount") == _total(listed, "amount") > Decimal(0)

        missing = await finance.get("/console/exports/download?kind=payouts&to=2026-01-01")
        assert missing.status_code == 422
        assert _field_error(missing, "from") == "Un export couvre une période : donnez son début."
        unknown = await finance.get(
            f"/console/exports/download?kind=refunds&from={day}&to={day}&merchant=mch_nobody"
        )
        assert unknown.status_code == 422
        assert _field_error(unknown, "merchant") == "Marchand introuvable : mch_nobody."
        kind = await finance.get(f"/console/exports/download?kind=plans&from={day}&to={day}")
        assert kind.status_code == 422 and "Choisissez ce qu" in _field_error(kind, "kind")
    # Each file taken, by whom and with which filters; the refused ones and the viewer's none.
    logged = await entries(runtime)
    assert [(e["action"], e["resource_id"]) for e in logged] == [
        ("export.download", kind) for kind in ("payments", "payouts", "refunds")
    ]
    assert {e["actor_name"] for e in logged} == {"finance@cauri.example"}
    assert logged[0]["after"]["merchant_id"] == seen.shop.id
    assert logged[0]["after"]["livemode"] is False
    assert logged[0]["after"]["period"]["start"].startswith(day)
