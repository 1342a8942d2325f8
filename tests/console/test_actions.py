"""Issue 14, the staff's actions from the console over real HTTP: the payout approval queue
(one approval pays; maker-checker above the platform's setting; nobody approves twice; a
rejection needs a reason), the audit log and its CSV, a webhook resend that reaches a real
receiver, a merchant's status, keys and limits. Each action checks the CSRF token and the
role, writes nothing when refused, and leaves an audit entry naming the staff member."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.builders import ConsoleClient, Member, make_staff
from tests.console.test_read_pages import _text
from tests.payouts.builders import FakeLiveOperator, live_operator, set_limits, top_up
from tests.payouts.test_maker_checker import dual_above, held, state
from tests.support import MerchantKeys, make_merchant, momo_body, scalar
from tests.webhooks.builders import set_endpoint
from tests.webhooks.receiver import Receiver

THRESHOLD = 5_000
QUEUE = "/console/approvals"


@pytest.fixture
def fake(runtime: Runtime) -> FakeLiveOperator:
    return live_operator(runtime)


@pytest.fixture
async def merchant(runtime: Runtime) -> MerchantKeys:
    """Live payouts above 1,000 XOF held for approval, 100,000 XOF available."""
    merchant = await make_merchant(runtime, name="Boutique Awa")
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_limits(runtime, merchant.id, approval_threshold=1_000)
    return merchant


async def signed_in(console: ConsoleClient, runtime: Runtime, role: str, name: str) -> Member:
    member = await make_staff(runtime, f"{name}@cauri.example", role)
    await console.signed_in_as(member)
    return member


async def post_form(
    console: ConsoleClient, page: str, action: str, data: dict[str, str] | None = None
) -> httpx.Response:
    """Posts `action` as the form on `page` would, with the session's CSRF token."""
    csrf = await console.csrf_of(page)
    return await console.post(action, {"csrf": csrf} | (data or {}))


async def audit_entries(runtime: Runtime, action: str) -> list[tuple[str, str, bool]]:
    """(kind, name, whether a staff account is named) of each entry of `action`."""
    async with runtime.sessionmaker() as session:
        rows = await session.execute(
            text(
                "SELECT actor_kind, actor_name, staff_account_id IS NOT NULL FROM audit_log "
                "WHERE action = :action ORDER BY id"
            ),
            {"action": action},
        )
        return [(kind, name, named) for kind, name, named in rows]


async def approvals_of(runtime: Runtime, reference: str) -> int:
    found = await scalar(
        runtime,
        "SELECT count(*) FROM payout_approvals WHERE payout_reference = :reference",
        reference=reference,
    )
    return int(found)


async def paid(runtime: Runtime, clock: ManualClock, worker: Worker, reference: str) -> str:
    """Runs the jobs the served app queued (at its real time), then the payout's status."""
    catch_up(clock)
    await worker.drain()
    status, _, _ = await state(runtime, reference)
    return status


def catch_up(clock: ManualClock) -> None:
    """Moves the tests' clock past the served app's (the real one): its jobs are due."""
    clock.advance((datetime.now(UTC) - clock.now()).total_seconds() + 1)


# --- the approval queue ---------------------------------------------------------------


async def test_a_payout_approved_from_the_queue_is_paid(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
    clock: ManualClock,
    worker: Worker,
) -> None:
    reference = await held(client, merchant, 3_000)
    await signed_in(console, runtime, "finance", "awa")
    queue = await console.get(QUEUE)
    assert queue.status_code == 200
    text = _text(queue)
    assert reference in text and "3 000 XOF" in text and "0 approbation sur 1" in text
    assert merchant.id in text

    detail = await console.get(f"/console/payouts/{reference}")
    assert f'action="{QUEUE}/{reference}/approve"' in detail.text  # its page has the forms too

    answer = await post_form(console, QUEUE, f"{QUEUE}/{reference}/approve", {"reason": "vu"})
    assert answer.status_code == 303
    assert answer.headers["location"] == f"{QUEUE}?transfert={reference}"
    after = await console.get(answer.headers["location"])
    assert f"Transfert {reference} approuvé (1 approbation sur 1)" in _text(after)
    assert f'id="payout-{reference}"' not in after.text  # out of the queue

    assert await paid(runtime, clock, worker, reference) == "succeeded"
    assert [d.reference for d in fake.disbursed] == [reference]
    assert await audit_entries(runtime, "payout.approve") == [("staff", "awa@cauri.example", True)]
    reason = await scalar(runtime, "SELECT reason FROM audit_log WHERE action = 'payout.approve'")
    assert reason == "vu"


async def test_maker_checker_two_finance_staff_above_the_threshold(
    client: httpx.AsyncClient,
    server: Any,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
    clock: ManualClock,
    worker: Worker,
) -> None:
    await dual_above(runtime, THRESHOLD)
    reference = await held(client, merchant, THRESHOLD + 1)
    async with ConsoleClient.of(server) as awa, ConsoleClient.of(server) as binta:
        await signed_in(awa, runtime, "finance", "awa")
        await signed_in(binta, runtime, "finance", "binta")

        first = await post_form(awa, QUEUE, f"{QUEUE}/{reference}/approve")
        assert first.status_code == 303
        shown = _text(await awa.get(first.headers["location"]))
        assert f"Approbation enregistrée pour {reference} : 1 approbation sur 2" in shown
        assert await state(runtime, reference) == ("pending", "required", False)

        # The same person again: a French message on the queue, nothing written.
        again = await post_form(awa, QUEUE, f"{QUEUE}/{reference}/approve")
        assert again.status_code == 409
        assert "Vous avez déjà approuvé le transfert" in _text(again)
        assert "1 approbation sur 2" in _text(again)
        assert await approvals_of(runtime, reference) == 1
        assert len(await audit_entries(runtime, "payout.approve")) == 1

        # Someone else: paid.
        queue = _text(await binta.get(QUEUE))
        assert "1 approbation sur 2" in queue and "awa@cauri.example" in queue
        second = await post_form(binta, QUEUE, f"{QUEUE}/{reference}/approve")
        assert second.status_code == 303
        assert "approuvé (2 approbations sur 2)" in _text(
            await binta.get(second.headers["location"])
        )
        assert await paid(runtime, clock, worker, reference) == "succeeded"

        # Decided: a third approval is a 409 page, not a 500.
        late = await post_form(binta, QUEUE, f"{QUEUE}/{reference}/approve")
        assert late.status_code == 409
        assert "n'attend pas d'approbation" in _text(late)
    assert await audit_entries(runtime, "payout.approve") == [
        ("staff", "awa@cauri.example", True),
        ("staff", "binta@cauri.example", True),
    ]


async def test_a_rejection_needs_a_reason_and_ends_the_payout(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
) -> None:
    reference = await held(client, merchant, 3_000)
    await signed_in(console, runtime, "finance", "awa")
    refused = await post_form(console, QUEUE, f"{QUEUE}/{reference}/reject", {"reason": " "})
    assert refused.status_code == 422
    assert "Indiquez le motif du rejet" in _text(refused)
    assert await state(runtime, reference) == ("pending", "required", False)

    nul = await post_form(console, QUEUE, f"{QUEUE}/{reference}/reject", {"reason": "a\x00b"})
    assert nul.status_code == 422 and "caractère interdit" in _text(nul)
    rejected = await post_form(
        console, QUEUE, f"{QUEUE}/{reference}/reject", {"reason": "bénéficiaire douteux"}
    )
    assert rejected.status_code == 303
    assert f"Transfert {reference} rejeté" in _text(await console.get(rejected.headers["location"]))
    assert await state(runtime, reference) == ("failed", "rejected", False)
    assert fake.disbursed == []
    assert await audit_entries(runtime, "payout.reject") == [("staff", "awa@cauri.example", True)]


@pytest.mark.parametrize("role", ["viewer", "support"])
async def test_a_role_without_the_permission_is_refused_approval(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
    role: str,
) -> None:
    reference = await held(client, merchant, 3_000)
    await signed_in(console, runtime, role, "koffi")
    queue = await console.get(QUEUE)
    assert queue.status_code == 200  # they read the queue
    assert "Approuver" not in queue.text and reference in queue.text
    assert "Approuver" not in (await console.get(f"/console/payouts/{reference}")).text
    for action in ("approve", "reject"):
        answer = await post_form(console, QUEUE, f"{QUEUE}/{reference}/{action}", {"reason": "x"})
        assert answer.status_code == 403
        assert "ne permet pas d" in _text(answer)
    assert await state(runtime, reference) == ("pending", "required", False)
    assert await approvals_of(runtime, reference) == 0
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0


async def test_an_action_without_its_csrf_token_is_refused(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
) -> None:
    reference = await held(client, merchant, 3_000)
    await signed_in(console, runtime, "admin", "awa")
    attempts = [
        (f"{QUEUE}/{reference}/approve", {}),
        (f"{QUEUE}/{reference}/reject", {"reason": "x", "csrf": "forged"}),
        (f"/console/merchants/{merchant.id}/actions/status", {"status": "suspended"}),
        (f"/console/merchants/{merchant.id}/actions/keys", {"mode": "live"}),
    ]
    for path, data in attempts:
        answer = await console.post(path, data)
        assert answer.status_code == 403, path
        assert "Ce formulaire a expiré ou ne vient pas de la console" in answer.text
    assert await state(runtime, reference) == ("pending", "required", False)
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0
    assert await scalar(runtime, "SELECT count(*) FROM api_keys") == 2
    assert await scalar(runtime, "SELECT status FROM merchants") == "active"


# --- the audit log --------------------------------------------------------------------


async def test_the_audit_log_shows_searches_and_exports_actions(
    client: httpx.AsyncClient,
    console: ConsoleClient,
    runtime: Runtime,
    merchant: MerchantKeys,
    fake: FakeLiveOperator,
) -> None:
    reference = await held(client, merchant, 3_000)
    await signed_in(console, runtime, "admin", "awa")
    actions_page = f"/console/merchants/{merchant.id}/actions"
    await post_form(console, actions_page, f"{actions_page}/status", {"status": "suspended"})
    await post_form(console, QUEUE, f"{QUEUE}/{reference}/reject", {"reason": "doublon"})

    page = await console.get("/console/audit")
    assert page.status_code == 200
    text = _text(page)
    assert "Entrées trouvées : 2" in text
    assert "merchant.set_status · merchant" in text and "payout.reject · payout" in text
    assert "awa@cauri.example (console)" in text
    assert '"active"' in page.text.replace("&#34;", '"') and "(modifié)" in text

    found = await console.get(f"/console/audit?action=payout.reject&resource_id={reference}")
    assert "Entrées trouvées : 1" in _text(found) and "doublon" in _text(found)
    none = await console.get("/console/audit?actor=someone@cauri.example")
    assert "Entrées trouvées : 0" in _text(none)
    wrong = await console.get("/console/audit?from=hier")
    assert wrong.status_code == 422

    exported = await console.get("/console/audit/export?actor=awa@cauri.example")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    # The export is itself an entry, written as the file starts: the file shows it last.
    assert [row["action"] for row in rows] == [
        "merchant.set_status",
        "payout.reject",
        "audit.export",
    ]
    assert json.loads(rows[0]["before"]) == {"status": "active"}
    assert json.loads(rows[0]["after"]) == {"status": "suspended"}
    assert json.loads(rows[2]["after"])["actor"] == "awa@cauri.example"


async def test_a_viewer_reads_the_audit_log_but_does_not_export_it(
    console: ConsoleClient, runtime: Runtime
) -> None:
    await signed_in(console, runtime, "viewer", "koffi")
    page = await console.get("/console/audit")
    assert page.status_code == 200 and "audit-export" not in page.text
    refused = await console.get("/console/audit/export")
    assert refused.status_code == 403


# --- webhooks -------------------------------------------------------------------------


async def test_a_viewer_is_refused_a_resend(
    console: ConsoleClient, runtime: Runtime, client: httpx.AsyncClient
) -> None:
    merchant = await make_merchant(runtime)
    with Receiver() as gone:
        await set_endpoint(client, merchant, gone.url)
    await client.post("/api/v1/payments", json=momo_body(), headers=merchant.headers())
    delivery = await scalar(runtime, "SELECT id FROM webhook_deliveries LIMIT 1")
    await signed_in(console, runtime, "viewer", "koffi")
    page = f"/console/deliveries/{delivery}"
    assert "Renvoyer" not in (await console.get(page)).text
    answer = await post_form(console, page, f"{page}/resend")
    assert answer.status_code == 403
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0


# --- merchants ------------------------------------------------------------------------


async def test_a_key_revoked_from_the_console_then_gets_401(
    client: httpx.AsyncClient, console: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    assert (await client.get("/api/v1/balance", headers=merchant.headers())).status_code == 200
    key_id = await scalar(
        runtime,
        "SELECT id FROM api_keys WHERE merchant_id = :m AND NOT livemode",
        m=merchant.id,
    )
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    answer = await post_form(console, page, f"{page}/keys/{key_id}/revoke")
    assert answer.status_code == 303
    assert "Clé révoquée" in _text(await console.get(answer.headers["location"]))
    assert (await client.get("/api/v1/balance", headers=merchant.headers())).status_code == 401
    assert await audit_entries(runtime, "key.revoke") == [("staff", "awa@cauri.example", True)]

    # Another merchant's key is not this page's to revoke.
    other = await make_merchant(runtime, name="Autre")
    theirs = await scalar(
        runtime, "SELECT id FROM api_keys WHERE merchant_id = :m LIMIT 1", m=other.id
    )
    refused = await post_form(console, page, f"{page}/keys/{theirs}/revoke")
    assert refused.status_code == 404
    assert (await client.get("/api/v1/balance", headers=other.headers())).status_code == 200


async def test_a_key_created_from_the_console_is_shown_once_and_works(
    client: httpx.AsyncClient, console: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    created = await post_form(console, page, f"{page}/keys", {"mode": "test"})
    assert created.status_code == 200
    key = created.text.split('id="new-key" class="wrap">')[1].split("<")[0]
    assert key.startswith("sk_test_")
    assert key not in (await console.get(page)).text  # shown this once
    headers = {"Authorization": f"Bearer {key}"}
    assert (await client.get("/api/v1/balance", headers=headers)).status_code == 200
    audit = await scalar(runtime, "SELECT after::text FROM audit_log WHERE action = 'key.create'")
    assert key not in audit and key[-4:] in audit

    refused = await post_form(console, page, f"{page}/keys", {"mode": "prod"})
    assert refused.status_code == 422 and "Mode inconnu : prod" in _text(refused)


async def test_status_and_limits_from_the_console(console: ConsoleClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    # The merchant's page leads an administrator there (a viewer's does not: test_read_pages).
    assert f'href="{page}"' in (await console.get(f"/console/merchants/{merchant.id}")).text
    answer = await post_form(console, page, f"{page}/status", {"status": "suspended"})
    assert answer.status_code == 303
    shown = await console.get(answer.headers["location"])
    assert "Statut enregistré." in _text(shown)
    assert await scalar(runtime, "SELECT status FROM merchants") == "suspended"

    bad = await post_form(console, page, f"{page}/status", {"status": "closed"})
    assert bad.status_code == 422
    assert await scalar(runtime, "SELECT status FROM merchants") == "suspended"

    limits = {"per_payout": "50 000", "daily": "", "approval_threshold": "20000"}
    answer = await post_form(console, page, f"{page}/limits", limits)
    assert answer.status_code == 303
    assert await scalar(runtime, "SELECT limit_per_payout FROM merchants") == 50_000
    assert await scalar(runtime, "SELECT approval_threshold FROM merchants") == 20_000
    wrong = await post_form(console, page, f"{page}/limits", {"daily": "beaucoup"})
    assert wrong.status_code == 422 and "Montant invalide : beaucoup" in _text(wrong)
    assert [kind for kind, _, _ in await audit_entries(runtime, "merchant.set_limits")] == ["staff"]
    assert len(await audit_entries(runtime, "merchant.set_status")) == 1


async def test_a_finance_member_may_not_administer_a_merchant(
    console: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "finance", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    assert (await console.get(page)).status_code == 403
    csrf = await console.csrf_of("/console/")
    answer = await console.post(f"{page}/status", {"csrf": csrf, "status": "suspended"})
    assert answer.status_code == 403
    assert await scalar(runtime, "SELECT status FROM merchants") == "active"
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0


async def test_a_fee_rule_from_the_console(console: ConsoleClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    await signed_in(console, runtime, "admin", "awa")
    page = f"/console/merchants/{merchant.id}/actions"
    rule = {"fee_mode": "mtn", "percent": "1,5", "fixed": "25", "currency": "XOF"}
    answer = await post_form(console, page, f"{page}/fees", rule)
    assert answer.status_code == 303
    assert "Règle de frais enregistrée." in _text(await console.get(answer.headers["location"]))
    assert await scalar(runtime, "SELECT percent::text || '/' || fixed FROM fee_rules") == (
        "1.5000/25"
    )
    for wrong, message in (
        ({"fee_mode": "pigeon"}, "Opérateur inconnu : pigeon."),
        ({"fee_mode": "mtn", "percent": "beaucoup"}, "Nombre invalide : beaucoup."),
    ):
        refused = await post_form(console, page, f"{page}/fees", wrong)
        assert refused.status_code == 422 and message in _text(refused)
    assert len(await audit_entries(runtime, "merchant.set_fee")) == 1
