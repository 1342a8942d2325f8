"""Issue 14, a merchant's administration from the console over real HTTP: its creation (keys
shown once, never logged), payout account and its validation, fee bearer, key rotation,
webhook endpoint and secret rotation, a credit of its balance (finance), and a failed plan
resolved from its page. Each action checks the CSRF token and the role and writes nothing
when refused."""

from __future__ import annotations

import re

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.builders import ConsoleClient
from tests.console.test_actions import audit_entries, catch_up, post_form, signed_in
from tests.console.test_read_pages import _text
from tests.foundation.builders import KEYED, run_cli
from tests.plans.builders import escrow, fetch
from tests.plans.test_resolution import failed_plan
from tests.support import ServerThread, make_merchant, momo_body, scalar


def _shown(page: httpx.Response, element_id: str) -> str:
    found = re.search(rf'id="{element_id}" class="wrap">([^<]+)<', page.text)
    assert found is not None, page.text
    return found.group(1)


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def _audit_text(runtime: Runtime) -> str:
    return str(
        await scalar(
            runtime,
            "SELECT coalesce(string_agg(concat_ws(' ', before::text, after::text, reason), ' '),"
            " '') FROM audit_log",
        )
    )


async def test_a_merchant_created_from_the_console_has_working_keys_never_logged(
    client: httpx.AsyncClient, console: ConsoleClient, runtime: Runtime
) -> None:
    await signed_in(console, runtime, "admin", "awa")
    listed = await console.get("/console/merchants")
    assert 'action="/console/merchants"' in listed.text
    created = await post_form(
        console, "/console/merchants", "/console/merchants", {"name": "Chez Fifi"}
    )
    assert created.status_code == 200  # the keys are on this answer, not behind a redirect
    test_key, live_key = _shown(created, "test-key"), _shown(created, "live-key")
    assert test_key.startswith("sk_test_") and live_key.startswith("sk_live_")
    assert (await client.get("/api/v1/balance", headers=_bearer(test_key))).status_code == 200
    merchant_id = await scalar(runtime, "SELECT id FROM merchants WHERE name = 'Chez Fifi'")
    assert test_key not in (await console.get(f"/console/merchants/{merchant_id}")).text

    assert await audit_entries(runtime, "merchant.create") == [("staff", "awa@cauri.example", True)]
    logged = await _audit_text(runtime)
    assert test_key not in logged and live_key not in logged and test_key[-4:] in logged

    refused = await post_form(console, "/console/merchants", "/console/merchants", {"name": " "})
    assert refused.status_code == 422
    assert "Le nom du marchand est obligatoire." in _text(refused)
    assert await scalar(runtime, "SELECT count(*) FROM merchants") == 1


async def test_payout_account_set_then_validated(console: ConsoleClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    account = {"phone_number": "22997000000", "operator": "mtn"}
    answer = await post_form(console, page, f"{page}/payout-account", account)
    assert answer.status_code == 303
    shown = await console.get(answer.headers["location"])
    assert "Compte de retrait enregistré." in _text(shown)
    assert "22997000000 (mtn), non validé" in _text(shown)
    assert "Valider ce compte" in shown.text

    validate = account | {"validated": "on"}
    answer = await post_form(console, page, f"{page}/payout-account", validate)
    assert answer.status_code == 303
    assert await scalar(runtime, "SELECT payout_validated FROM merchants") is True
    assert "Valider ce compte" not in (await console.get(page)).text

    wrong = await post_form(
        console, page, f"{page}/payout-account", {"phone_number": "1", "operator": "pigeon"}
    )
    assert wrong.status_code == 422 and "Opérateur Mobile Money inconnu : pigeon" in _text(wrong)
    assert len(await audit_entries(runtime, "merchant.set_payout_account")) == 2


async def test_the_fee_bearer_applies_to_new_payments(
    client: httpx.AsyncClient, console: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    answer = await post_form(console, page, f"{page}/fee-bearer", {"fee_bearer": "merchant"})
    assert answer.status_code == 303
    paid = await client.post("/api/v1/payments", json=momo_body(), headers=merchant.headers())
    assert paid.json()["data"]["fee_bearer"] == "merchant"
    wrong = await post_form(console, page, f"{page}/fee-bearer", {"fee_bearer": "personne"})
    assert wrong.status_code == 422 and "Valeur inconnue : personne" in _text(wrong)
    assert len(await audit_entries(runtime, "merchant.set_fee_bearer")) == 1


async def test_rotated_keys_old_refused_new_accepted(
    client: httpx.AsyncClient, console: ConsoleClient, runtime: Runtime, clock: ManualClock
) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    rotated = await post_form(console, page, f"{page}/keys/rotate", {"mode": "test", "grace": "0"})
    assert rotated.status_code == 200
    key = _shown(rotated, "new-key")
    assert key not in (await console.get(page)).text
    catch_up(clock)  # the API's clock, past the served console's instant of the rotation
    assert (await client.get("/api/v1/balance", headers=merchant.headers())).status_code == 401
    assert (await client.get("/api/v1/balance", headers=_bearer(key))).status_code == 200
    assert key not in await _audit_text(runtime)
    wrong = await post_form(console, page, f"{page}/keys/rotate", {"mode": "test", "grace": "1an"})
    assert wrong.status_code == 422 and "Délai inconnu : 1an." in _text(wrong)
    assert len(await audit_entries(runtime, "key.rotate")) == 1


async def test_webhook_endpoint_and_its_secret_rotated(
    client: httpx.AsyncClient, console: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    url = "https://boutique.example/webhooks"
    answer = await post_form(console, page, f"{page}/webhook", {"mode": "test", "url": url})
    assert answer.status_code == 303
    seen = (await client.get("/api/v1/webhooks/endpoint", headers=merchant.headers())).json()
    old_secret = seen["data"]["secret"]
    assert seen["data"]["url"] == url

    rotated = await post_form(console, page, f"{page}/webhook/rotate-secret", {"mode": "test"})
    assert rotated.status_code == 200
    secret = _shown(rotated, "new-secret")
    assert secret.startswith("whsec_") and secret != old_secret
    seen = (await client.get("/api/v1/webhooks/endpoint", headers=merchant.headers())).json()
    assert seen["data"]["secret"] == secret
    assert secret not in (await console.get(page)).text
    logged = await _audit_text(runtime)
    assert secret not in logged and old_secret not in logged and url in logged

    unsafe = await post_form(
        console, page, f"{page}/webhook", {"mode": "test", "url": "ftp://boutique.example/x"}
    )
    assert unsafe.status_code == 422
    assert len(await audit_entries(runtime, "webhook_endpoint.set")) == 1
    assert len(await audit_entries(runtime, "webhook_endpoint.rotate_secret")) == 1


async def test_a_credit_by_finance_shows_in_the_balance_and_support_is_refused(
    client: httpx.AsyncClient, server: ServerThread, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    page = f"/console/merchants/{merchant.id}"
    credit = {"amount": "25 000", "currency": "XOF", "mode": "test", "reason": "virement 42"}
    async with ConsoleClient.of(server) as support:
        await signed_in(support, runtime, "support", "koffi")
        assert "Créditer" not in (await support.get(page)).text
        refused = await post_form(support, page, f"{page}/credit", credit)
        assert refused.status_code == 403
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0

    async with ConsoleClient.of(server) as finance:
        await signed_in(finance, runtime, "finance", "awa")
        no_reason = await post_form(finance, page, f"{page}/credit", credit | {"reason": ""})
        assert no_reason.status_code == 422
        assert "Le motif du crédit est obligatoire." in _text(no_reason)
        answer = await post_form(finance, page, f"{page}/credit", credit)
        assert answer.status_code == 303
        assert "Solde crédité." in _text(await finance.get(answer.headers["location"]))
    balance = (await client.get("/api/v1/balance", headers=merchant.headers())).json()
    assert [row["available"] for row in balance["data"] if row["currency"] == "XOF"] == [25_000]
    assert await audit_entries(runtime, "merchant.credit") == [("staff", "awa@cauri.example", True)]


async def test_a_failed_plan_resolved_from_its_page(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
) -> None:
    merchant, reference = await failed_plan(client, runtime, clock, worker)
    page = f"/console/plans/{reference}"
    await signed_in(console, runtime, "finance", "awa")
    shown = await console.get(page)
    assert "Rembourser au client" in shown.text and "Libérer au marchand" in shown.text

    no_reason = await post_form(console, page, f"{page}/release", {"reason": " "})
    assert no_reason.status_code == 422
    assert "Dites pourquoi l'argent va au marchand." in _text(no_reason)
    released = await post_form(console, page, f"{page}/release", {"reason": "payé en espèces"})
    assert released.status_code == 303
    after = await console.get(released.headers["location"])
    assert "Séquestre libéré au marchand" in _text(after)
    assert "Libérer au marchand" not in after.text  # resolved: no more forms
    assert (await fetch(client, merchant, reference))["resolution"] == "released_to_merchant"
    assert await escrow(runtime, merchant.id, reference) == 0

    again = await post_form(
        console,
        "/console/",
        f"{page}/refund-to",
        {"phone_number": "22997000000", "operator": "mtn"},
    )
    assert again.status_code == 409  # the service's refusal, on the page
    assert await audit_entries(runtime, "plan.release_to_merchant") == [
        ("staff", "awa@cauri.example", True)
    ]
    assert await audit_entries(runtime, "plan.refund_to") == []


async def test_a_viewer_is_refused_every_post(console: ConsoleClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "viewer", "koffi")
    base = f"/console/merchants/{merchant.id}"
    posts = [
        "/console/merchants",
        f"{base}/credit",
        f"{base}/actions/payout-account",
        f"{base}/actions/fee-bearer",
        f"{base}/actions/keys/rotate",
        f"{base}/actions/webhook",
        f"{base}/actions/webhook/rotate-secret",
        "/console/plans/00000000-0000-0000-0000-000000000000/refund-to",
        "/console/plans/00000000-0000-0000-0000-000000000000/release",
        "/console/settings",
    ]
    fields = {"name": "x", "mode": "test", "amount": "1", "reason": "x", "fee_percent": "1"}
    for path in posts:
        answer = await post_form(console, base, path, fields)
        assert answer.status_code == 403, path
        assert "ne permet pas" in _text(answer)
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0
    assert await scalar(runtime, "SELECT count(*) FROM merchants") == 1


async def test_a_form_without_its_csrf_token_is_refused(
    console: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    base = f"/console/merchants/{merchant.id}"
    attempts = [
        ("/console/merchants", {"name": "Fraude"}),
        (f"{base}/credit", {"amount": "1", "currency": "XOF", "mode": "test", "reason": "x"}),
        (f"{base}/actions/keys/rotate", {"mode": "test", "grace": "0"}),
        (f"{base}/actions/webhook/rotate-secret", {"mode": "test"}),
        ("/console/settings", {"fee_percent": "9"}),
    ]
    for path, data in attempts:
        answer = await console.post(path, data)
        assert answer.status_code == 403, path
        assert "Ce formulaire a expiré ou ne vient pas de la console" in answer.text
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0
    assert await scalar(runtime, "SELECT count(*) FROM merchants") == 1
    assert await scalar(runtime, "SELECT count(*) FROM api_keys") == 2
    assert await scalar(runtime, "SELECT count(*) FROM platform_settings") == 0


async def test_the_cli_sets_the_endpoint_and_rotates_the_secret(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    url = "https://boutique.example/webhooks"
    base = ("webhooks", "set-endpoint", merchant.id, "--mode", "live")
    # The webhook secrets are kept encrypted with CAURI_SECRET_KEY (issue 23).
    assert (await run_cli(database_url, *base, "--url", url, env_vars=KEYED)).exit_code == 0
    rotated = await run_cli(
        database_url,
        "webhooks",
        "rotate-secret",
        merchant.id,
        "--mode",
        "live",
        "--json",
        env_vars=KEYED,
    )
    secret = rotated.json()["secret"]
    seen = await client.get("/api/v1/webhooks/endpoint", headers=merchant.headers(livemode=True))
    assert seen.json()["data"] == {"url": url, "secret": secret}
    assert (await run_cli(database_url, *base, "--disable", env_vars=KEYED)).exit_code == 0
    assert await scalar(runtime, "SELECT url FROM webhook_endpoints WHERE livemode") is None
    assert secret not in await _audit_text(runtime)
    assert [kind for kind, _, _ in await audit_entries(runtime, "webhook_endpoint.set")] == [
        "cli",
        "cli",
    ]
