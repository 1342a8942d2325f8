"""Issue 28: bulk payouts from the dashboard. A CSV file uploaded by a member who moves money
is a payout batch made by `payout_batches` (each item an ordinary payout, a refused one
reported while the others go on); live, a file whose items add up above the owner's
threshold is a draft until a second member approves it (the team's maker-checker), then one
batch however often it is approved. Bad files are refused in French, never a 500; readers
read and never upload. Each upload and decision audited with the member as actor."""

from __future__ import annotations

import re

import httpx

from cauri.kit.clock import ManualClock
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.console.builders import ConsoleClient, make_member
from tests.console.test_actions import catch_up
from tests.dashboard.test_payouts import _post_form, _signed_in, _threshold
from tests.dashboard.test_payouts import live_merchant as live_merchant
from tests.payouts.builders import SUCCEEDS, set_payout_account, top_up
from tests.support import MerchantKeys, ServerThread, make_merchant, scalar

LIVE = "/dashboard/payout-batches"
TEST = "/dashboard/test/payout-batches"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_BATCH = re.compile(r"/payout-batches/(pyb_[0-9a-f]+)")
_DRAFT = re.compile(r"/payout-batches/drafts/(pbd_[0-9a-f]+)")


def rows(*amounts: int, prefix: str = "p") -> bytes:
    """A CSV of third-party payouts to a number the simulator pays, one per amount."""
    lines = ["external_id,amount,operator,phone_number,beneficiary_name"]
    lines += [f"{prefix}-{n},{amount},mtn,{SUCCEEDS},Koffi" for n, amount in enumerate(amounts)]
    return ("\n".join(lines) + "\n").encode()


async def upload(
    client: ConsoleClient, page: str, data: bytes, name: str = "paie.csv"
) -> httpx.Response:
    """Posts the file from the batches' page, with its CSRF token."""
    shown = await client.get(page)
    found = _CSRF.search(shown.text)
    assert found is not None, shown.text
    return client._remember(
        await client.http.post(
            page,
            data={"csrf": found.group(1)},
            files={"file": (name, data, "text/csv")},
            headers=client._headers(),
        )
    )


async def test_a_test_file_is_a_batch_at_once_made_by_the_worker_and_shown(
    runtime: Runtime, clock: ManualClock, worker: Worker, dashboard: ConsoleClient
) -> None:
    """The page's own example is a valid file; sent again, it is the same batch."""
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 200_000)
    await set_payout_account(runtime, merchant.id, "22997110000", validated=True)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "f@shop.example", "finance")
    )
    page = (await dashboard.get(TEST)).text
    assert 'id="batch-form"' in page and "phone_number" in page
    example = await dashboard.get("/dashboard/payout-batches/example.csv")
    assert example.headers["content-type"].startswith("text/csv")
    sent = await upload(dashboard, TEST, example.content, "exemple.csv")
    assert sent.status_code == 303, sent.text
    location = sent.headers["location"]
    assert location.startswith(f"{TEST}/pyb_") and location.endswith("?fait=envoye")
    catch_up(clock)
    await worker.drain()
    shown = (await dashboard.get(location)).text
    assert 'id="action-done"' in shown and "terminé" in shown
    assert "salaire-2026-11-001" in shown and "avance-2026-11-003" in shown
    payouts = re.findall(r'href="/dashboard/test/payouts/(pyo_[0-9a-f]+)"', shown)
    assert len(payouts) == 3
    assert (await dashboard.get(f"/dashboard/test/payouts/{payouts[0]}")).status_code == 200
    again = await upload(dashboard, TEST, example.content, "exemple.csv")
    assert again.headers["location"] == location.replace("envoye", "deja")
    listed = (await dashboard.get(TEST)).text
    assert listed.count('href="/dashboard/test/payout-batches/pyb_') == 1
    assert "3 : 3 réussis" in listed
    # Live lists only its own batches; another environment's reference is unknown there.
    assert (await dashboard.get(location.split("?")[0].replace(TEST, LIVE))).status_code == 404
    entry = "SELECT actor_kind || ' ' || actor_name || ' ' || action FROM audit_log"
    assert await scalar(runtime, entry) == "member f@shop.example payout_batch.create"


async def test_live_at_or_below_the_threshold_at_once_above_a_draft_a_second_member_approves(
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    server: ServerThread,
    live_merchant: MerchantKeys,
) -> None:
    await _threshold(runtime, live_merchant.id, 10_000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checker = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    async with (
        await _signed_in(server, maker) as finance,
        await _signed_in(server, checker) as owner,
    ):
        at_threshold = await upload(finance, LIVE, rows(4000, 6000, prefix="small"))
        assert _BATCH.search(at_threshold.headers["location"]), at_threshold.text
        big = rows(20_000, 5000, prefix="big")
        asked = await upload(finance, LIVE, big)
        assert asked.status_code == 303
        draft_page = asked.headers["location"]
        found = _DRAFT.search(draft_page)
        assert found is not None, draft_page
        reference = found.group(1)
        # Sent twice while it awaits (a double click): one draft; no batch for it yet.
        assert (await upload(finance, LIVE, big)).headers["location"] == draft_page
        assert await scalar(runtime, "SELECT count(*) FROM payout_batch_drafts") == 1
        assert await scalar(runtime, "SELECT count(*) FROM payout_batches") == 1
        assert 'id="alert-batch-drafts"' in (await owner.get("/dashboard/")).text
        listed = (await owner.get(LIVE)).text
        assert f"drafts/{reference}" in listed
        # The maker may cancel, not approve: the page offers no approval, a forged one is
        # refused.
        mine = (await finance.get(draft_page)).text
        assert "big-0" in mine and "25" in mine
        assert f"{reference}/cancel" in mine and f"{reference}/approve" not in mine
        drafts = f"{LIVE}/drafts/{reference}"
        refused = await _post_form(finance, drafts, f"{drafts}/approve")
        assert refused.status_code == 409 and "déjà approuvé" in refused.text
        # A second member approves: one batch, named by the draft; again: refused.
        approved = await _post_form(owner, drafts, f"{drafts}/approve")
        assert approved.status_code == 303, approved.text
        assert approved.headers["location"].startswith(f"{LIVE}/pyb_")
        again = await _post_form(owner, drafts, f"{drafts}/approve")
        assert again.status_code == 409 and "n&#39;attend plus" in again.text
    made = "SELECT count(*) FROM payout_batches WHERE external_id = :reference"
    assert await scalar(runtime, made, reference=reference) == 1
    catch_up(clock)
    await worker.drain()
    statuses = "SELECT string_agg(status, ' ' ORDER BY external_id) FROM payouts"
    assert await scalar(runtime, statuses) == "succeeded succeeded succeeded succeeded"
    trail = await scalar(
        runtime,
        "SELECT string_agg(actor_name || ' ' || action, ', ' ORDER BY id) FROM audit_log",
    )
    assert trail == (
        "f@shop.example payout_batch.create, f@shop.example payout_batch_draft.create, "
        "o@shop.example payout_batch_draft.approve, o@shop.example payout_batch.create"
    )


async def test_a_draft_whose_own_account_changed_is_refused_and_a_rejected_one_pays_nothing(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    """Rows without a number go to the validated account shown when the file was sent, or
    nowhere."""
    await _threshold(runtime, live_merchant.id, 1000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checker = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    own = b"external_id,amount\nown-1,5000\n"
    async with (
        await _signed_in(server, maker) as finance,
        await _signed_in(server, checker) as owner,
    ):
        draft_page = (await upload(finance, LIVE, own)).headers["location"].split("?")[0]
        assert "22997110000" in (await owner.get(draft_page)).text
        await set_payout_account(runtime, live_merchant.id, "22996330000", validated=True)
        refused = await _post_form(owner, draft_page, f"{draft_page}/approve")
        assert refused.status_code == 409 and "compte de transfert a changé" in refused.text
        rejected = await _post_form(owner, draft_page, f"{draft_page}/reject")
        assert rejected.status_code == 303
        assert "rejeté par o@shop.example" in (await owner.get(draft_page)).text
        # Decided, the same file may be sent again: a new draft.
        assert (await upload(finance, LIVE, own)).headers["location"] != draft_page
    assert await scalar(runtime, "SELECT count(*) FROM payout_batches") == 0
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0


async def test_bad_files_are_refused_in_french_a_refused_item_not_and_readers_only_read(
    runtime: Runtime, clock: ManualClock, worker: Worker, server: ServerThread
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 10_000)
    viewer = await make_member(runtime, merchant.id, "v@shop.example")
    finance = await make_member(runtime, merchant.id, "f@shop.example", "finance")
    async with await _signed_in(server, viewer) as reader:
        page = await reader.get(TEST)
        assert page.status_code == 200 and 'id="batch-form"' not in page.text
        csrf = _CSRF.search((await reader.get("/dashboard/")).text)
        assert csrf is not None
        forged = await reader.http.post(
            TEST,
            data={"csrf": csrf.group(1)},
            files={"file": ("paie.csv", rows(1000), "text/csv")},
            headers=reader._headers(),
        )
        assert forged.status_code == 403 and "lecture seule" in forged.text
    too_many = rows(*([1000] * 1001))
    cells = b"external_id,amount\np-1,1000\np-2,1000,mtn\n"
    async with await _signed_in(server, finance) as mover:
        for name, data, said in (
            ("paie.xlsx", rows(1000), "doit être un CSV"),
            ("paie.csv", b"PK\x03\x04\x00\x00binary", "pas un texte CSV"),
            ("paie.csv", b"external_id,amount\n", "au moins 1"),
            ("paie.csv", too_many, "plus de 1000"),
            ("paie.csv", cells, "La ligne 3 a plus de cellules"),
            ("paie.csv", b"", "Le fichier est vide"),
        ):
            answer = await upload(mover, TEST, data, name)
            assert answer.status_code == 422, (name, answer.text)
            assert said in answer.text.replace("&#39;", "'"), (name, answer.text)
            assert 'id="file-refused"' in answer.text
        assert await scalar(runtime, "SELECT count(*) FROM payout_batches") == 0
        # A refused item does not stop the others (Excel's semicolons, its encoding).
        sheet = "external_id;amount;operator;phone_number;beneficiary_name\n"
        sheet += f"a;1000;mtn;{SUCCEEDS};Aïcha\nb;deux mille;mtn;{SUCCEEDS};\n"
        made = await upload(mover, TEST, sheet.encode("cp1252"))
        assert made.status_code == 303, made.text
        catch_up(clock)
        await worker.drain()
        shown = (await mover.get(made.headers["location"])).text
        assert "Refusé (invalid_request)" in shown and 'href="/dashboard/test/payouts/pyo_' in shown
    assert await scalar(runtime, "SELECT beneficiary_name FROM payouts") == "Aïcha"
    assert await scalar(
        runtime, "SELECT error->>'code' FROM payout_batch_items WHERE error IS NOT NULL"
    ) == ("invalid_request")
