"""Spec: Authentication, and DESIGN invariant 6 (environments and merchants never mix)."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import httpx
import pytest

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from tests.foundation.builders import API, open_live_mode
from tests.support import assert_error, make_merchant, momo_body, scalar


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Basic dXNlcjpwYXNz",
        "Token {key}",
        "Bearer",
        "Bearer ",
        "Bearer {key} extra",
        "Bearer{key}",
        "{key}",
    ],
    ids=[
        "missing",
        "empty",
        "basic",
        "other-scheme",
        "no-key",
        "blank-key",
        "two-words",
        "no-space",
        "no-scheme",
    ],
)
async def test_absent_or_malformed_header_is_unauthorized(
    client: httpx.AsyncClient, runtime: Runtime, authorization: str | None
) -> None:
    merchant = await make_merchant(runtime)
    headers = (
        {}
        if authorization is None
        else {"Authorization": authorization.format(key=merchant.test_key)}
    )
    assert_error(await client.get(f"{API}/payments", headers=headers), 401, "unauthorized")
    # A new payment's key is read with the fee terms of its mode (merchants.auth): the same
    # refusal, whether the body names a known mode or not.
    for body in (momo_body(), momo_body(operator="nobody")):
        created = await client.post(f"{API}/payments", json=body, headers=headers)
        assert_error(created, 401, "unauthorized")


@pytest.mark.parametrize(
    "make_key",
    [
        lambda key: "sk_test_" + "A" * 43,  # well formed, never issued
        lambda key: key.replace("sk_test_", "sk_live_", 1),  # a test key passed as live
        lambda key: key.replace("sk_test_", "pk_test_", 1),  # wrong prefix
        lambda key: key.replace("sk_test_", "", 1),  # no prefix at all
        lambda key: key[:-1],  # truncated
        lambda key: key.upper(),  # keys are case-sensitive
    ],
    ids=["unknown", "test-as-live", "pk-prefix", "no-prefix", "truncated", "uppercased"],
)
async def test_invalid_key_is_unauthorized(
    client: httpx.AsyncClient, runtime: Runtime, make_key: object
) -> None:
    merchant = await make_merchant(runtime)
    assert callable(make_key)
    headers = {"Authorization": f"Bearer {make_key(merchant.test_key)}"}
    assert_error(await client.get(f"{API}/payments", headers=headers), 401, "unauthorized")
    created = await client.post(f"{API}/payments", json=momo_body(), headers=headers)
    assert_error(created, 401, "unauthorized")
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0
    # The genuine key still works: the refusal is about the key, not the account.
    assert (await client.get(f"{API}/payments", headers=merchant.headers())).status_code == 200


async def test_scheme_is_case_insensitive(client: httpx.AsyncClient, runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    headers = {"Authorization": f"bearer {merchant.test_key}"}
    assert (await client.get(f"{API}/payments", headers=headers)).status_code == 200


async def test_expired_key(client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock) -> None:
    merchant = await make_merchant(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        key = await merchants.create_key(
            session,
            merchant.id,
            livemode=False,
            now=clock.now(),
            expires_at=clock.now() + timedelta(hours=1),
        )
    headers = {"Authorization": f"Bearer {key}"}
    assert (await client.get(f"{API}/payments", headers=headers)).status_code == 200
    clock.advance(hours=1)  # the expiry instant itself is past the key's life
    assert_error(await client.get(f"{API}/payments", headers=headers), 401, "key_expired")
    created = await client.post(f"{API}/payments", json=momo_body(), headers=headers)
    assert_error(created, 401, "key_expired")
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0
    # The merchant's keys without expiry are untouched.
    assert (await client.get(f"{API}/payments", headers=merchant.headers())).status_code == 200


@pytest.mark.parametrize("status", ["kyc_pending", "suspended"])
async def test_inactive_merchant_is_refused_on_live_only(
    client: httpx.AsyncClient, runtime: Runtime, status: str
) -> None:
    open_live_mode(runtime)
    merchant = await make_merchant(runtime, status=status)
    live = merchant.headers(livemode=True)
    for response in (
        await client.get(f"{API}/payments", headers=live),
        await client.get(f"{API}/payment-modes", headers=live),
        await client.post(f"{API}/payments", json=momo_body(), headers=live),
    ):
        assert_error(response, 403, "merchant_inactive")
    test = merchant.headers()
    assert (await client.get(f"{API}/payments", headers=test)).status_code == 200
    assert (await client.get(f"{API}/payment-modes", headers=test)).status_code == 200
    created = await client.post(f"{API}/payments", json=momo_body(), headers=test)
    assert created.status_code == 201, created.text
    assert await scalar(runtime, "SELECT count(*) FROM payments WHERE livemode") == 0


async def test_reactivated_merchant_is_accepted_on_live(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime, status="suspended")
    live = merchant.headers(livemode=True)
    assert_error(await client.get(f"{API}/payments", headers=live), 403, "merchant_inactive")
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_status(session, merchant.id, "active")
    assert (await client.get(f"{API}/payments", headers=live)).status_code == 200


async def test_keys_are_prefixed_random_and_stored_hashed(runtime: Runtime) -> None:
    first = await make_merchant(runtime)
    second = await make_merchant(runtime)
    keys = [first.test_key, first.live_key, second.test_key, second.live_key]
    assert first.test_key.startswith("sk_test_") and first.live_key.startswith("sk_live_")
    assert len(set(keys)) == 4
    # 32 random bytes, url-safe base64: well beyond guessing.
    assert all(len(key.split("_", 2)[2]) >= 43 for key in keys)
    async with runtime.sessionmaker() as session:
        from sqlalchemy import text

        rows = (await session.execute(text("SELECT * FROM api_keys"))).mappings().all()
    stored = " ".join(str(value) for row in rows for value in row.values())
    for key in keys:
        assert key not in stored
        assert key.split("_", 2)[2] not in stored
    assert {row["key_hash"] for row in rows} == {
        hashlib.sha256(key.encode()).hexdigest() for key in keys
    }


async def test_environments_never_see_each_other(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    open_live_mode(runtime)
    merchant = await make_merchant(runtime)
    test, live = merchant.headers(), merchant.headers(livemode=True)
    # The same external_id exists once per environment.
    made_live = await client.post(
        f"{API}/payments", json=momo_body(external_id="order-7"), headers=live
    )
    made_test = await client.post(
        f"{API}/payments", json=momo_body(external_id="order-7"), headers=test
    )
    assert made_live.status_code == 201 and made_test.status_code == 201
    live_payment, test_payment = made_live.json()["data"], made_test.json()["data"]
    assert live_payment["livemode"] is True and test_payment["livemode"] is False
    assert live_payment["reference"] != test_payment["reference"]

    for reference, other_env in (
        (live_payment["reference"], test),
        (test_payment["reference"], live),
    ):
        assert_error(
            await client.get(f"{API}/payments/{reference}", headers=other_env), 404, "not_found"
        )
    for headers, own in ((test, test_payment), (live, live_payment)):
        by_external_id = await client.get(f"{API}/payments/order-7", headers=headers)
        assert by_external_id.json()["data"]["reference"] == own["reference"]
        listed = (await client.get(f"{API}/payments", headers=headers)).json()
        assert [p["reference"] for p in listed["data"]] == [own["reference"]]
        assert listed["meta"]["total"] == 1
    # A live key has no test helpers, even for its own live payment.
    helper = await client.post(
        f"{API}/test-helpers/payments/{live_payment['reference']}/succeed", headers=live
    )
    assert_error(helper, 404, "not_found")


async def test_another_merchants_payment_is_not_found(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    owner = await make_merchant(runtime, name="Owner")
    stranger = await make_merchant(runtime, name="Stranger")
    made = await client.post(
        f"{API}/payments",
        json=momo_body(external_id="owner-1", phone_number="22997000002"),
        headers=owner.headers(),
    )
    reference = made.json()["data"]["reference"]
    for path in (reference, "owner-1"):
        missing = await client.get(f"{API}/payments/{path}", headers=stranger.headers())
        never_existed = await client.get(
            f"{API}/payments/00000000-0000-4000-8000-000000000000", headers=stranger.headers()
        )
        assert_error(missing, 404, "not_found")
        # Indistinguishable from a reference that never existed.
        assert missing.json()["error"]["code"] == never_existed.json()["error"]["code"]
    listed = (await client.get(f"{API}/payments", headers=stranger.headers())).json()
    assert listed["data"] == []
    helper = await client.post(
        f"{API}/test-helpers/payments/{reference}/succeed", headers=stranger.headers()
    )
    assert_error(helper, 404, "not_found")
    status = (await client.get(f"{API}/payments/{reference}", headers=owner.headers())).json()
    assert status["data"]["status"] == "pending"
