"""The MTN MoMo connector against MTN's contract fake, over real HTTP: what it sends, how it
reads every answer (an unknown outcome is never a failure), its shared tokens, its check,
its reading of callbacks, and that no secret ever reaches an exchange record."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from cauri.operators.config import ConnectorConfig
from cauri.operators.mtn_momo import KIND
from cauri.operators.mtn_momo.connector import MtnMomoConnector
from cauri.operators.protocol import Collection, Disbursement, Notice, OperatorResult, Outcome
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.mtn_live import API_KEY, API_USER, NUMBER, SECRETS, SUBSCRIPTION_KEYS, mtn_fake


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"
        yield fake


def config(fake: MtnMomoFake, **changes: object) -> ConnectorConfig:
    built = ConnectorConfig(
        name="mtn-sandbox",
        kind="mtn_momo",
        environment="sandbox",
        base_url=fake.base_url,
        settings={"target_environment": "sandbox", "currency": "EUR"},
        secrets=SECRETS,
        timeout=0.5,
        connect_timeout=0.5,
    )
    return dataclasses.replace(built, **changes)  # type: ignore[arg-type]


@pytest.fixture
async def mtn(fake: MtnMomoFake) -> AsyncIterator[MtnMomoConnector]:
    connector = MtnMomoConnector(config(fake))
    yield connector
    await connector.aclose()


def collection(number: str = NUMBER, amount: int = 5000, currency: str = "XOF") -> Collection:
    return Collection(str(uuid.uuid4()), "mtn", amount, currency, number, None, "Commande 42")


def transfer(number: str = NUMBER, refund_of: str | None = None) -> Disbursement:
    return Disbursement(str(uuid.uuid4()), "mtn", 1000, "XOF", number, refund_of=refund_of)


def assert_unknown(result: OperatorResult) -> None:
    assert (result.outcome, result.unknown) == (Outcome.PENDING, True), result


async def test_a_collection_is_requested_then_read_back(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    asked = collection()
    sent = await mtn.collect(asked)
    assert (sent.outcome, sent.operator_reference) == (Outcome.PENDING, asked.reference)
    [request] = fake.posts("collect")
    assert request.headers["x-reference-id"] == asked.reference
    assert request.headers["x-target-environment"] == "sandbox"
    assert "x-callback-url" not in request.headers
    assert request.body["amount"] == "5000" and request.body["currency"] == "EUR"
    assert request.body["externalId"] == asked.reference
    status = await mtn.collection_status(asked)
    assert status.outcome is Outcome.SUCCEEDED
    assert status.operator_reference == fake.transactions[asked.reference].financial_id


async def test_the_currency_setting_applies_in_mtn_sandbox_only() -> None:
    """Issue 23: outside MTN's sandbox each request goes in its own currency, whatever an
    account stored before the rule holds (mtn_cg's XAF is never sent as XOF)."""
    with MtnMomoFake(
        api_user=API_USER,
        api_key=API_KEY,
        subscription_keys=SUBSCRIPTION_KEYS,
        target_environment="mtncongo",
        currency="XAF",
    ) as congo:
        congo.callback_mode = "drop"
        settings = {"target_environment": "mtncongo", "currency": "XOF"}
        connector = MtnMomoConnector(config(congo, environment="production", settings=settings))
        try:
            asked = dataclasses.replace(collection(currency="XAF"), operator="mtn_cg")
            sent = await connector.collect(asked)
            assert sent.outcome is Outcome.PENDING, sent
            paid = await connector.disburse(
                dataclasses.replace(transfer(), operator="mtn_cg", currency="XAF")
            )
            assert paid.outcome is Outcome.PENDING, paid
        finally:
            await connector.aclose()
    assert [r.body["currency"] for r in congo.requests if "currency" in (r.body or {})] == [
        "XAF",
        "XAF",
    ]


def test_the_currency_setting_is_refused_outside_mtn_sandbox() -> None:
    with pytest.raises(ValueError, match="ne vaut que dans le bac à sable de MTN"):
        validate(settings={"target_environment": "mtnbenin", "currency": "EUR"})
    validate(settings={"target_environment": "mtnbenin"})
    validate(settings={"target_environment": "sandbox", "currency": "EUR"})


def validate(settings: dict[str, str]) -> None:
    assert KIND.check_settings is not None
    KIND.check_settings(settings)


async def test_amounts_in_cents_and_the_callback_url(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    asked = dataclasses.replace(
        collection(amount=1234, currency="EUR"), callback_url="https://cauri.example/cb/1"
    )
    await mtn.collect(asked)
    [request] = fake.posts("collect")
    assert request.body["amount"] == "12.34"
    assert request.headers["x-callback-url"] == "https://cauri.example/cb/1"


async def test_a_reference_sent_again_is_still_accepted_never_failed(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    asked = collection()
    await mtn.collect(asked)
    again = await mtn.collect(asked)
    assert again.outcome is Outcome.PENDING and not again.unknown
    assert again.exchanges[-1].response_status == 409
    assert len(fake.received("collect")) == 1


async def test_a_reference_mtn_does_not_know(mtn: MtnMomoConnector) -> None:
    result = await mtn.disbursement_status(transfer())
    assert (result.outcome, result.unknown_reference) == (Outcome.PENDING, True)


@pytest.mark.parametrize("shape", ["object", "string"])
async def test_a_failure_reason_in_either_shape(
    fake: MtnMomoFake, mtn: MtnMomoConnector, shape: str
) -> None:
    fake.reason_shape = shape
    fake.outcome_for(NUMBER, "FAILED", "APPROVAL_REJECTED")
    asked = collection()
    await mtn.collect(asked)
    result = await mtn.collection_status(asked)
    assert (result.outcome, result.reason) == (Outcome.FAILED, "approval_rejected")


async def test_a_transfer_and_a_refund_of_a_collection(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    paid = collection()
    await mtn.collect(paid)
    sent = transfer()
    assert (await mtn.disburse(sent)).outcome is Outcome.PENDING
    assert (await mtn.disbursement_status(sent)).outcome is Outcome.SUCCEEDED
    refund = transfer(refund_of=paid.reference)
    assert (await mtn.refund(refund)).outcome is Outcome.PENDING
    assert fake.received("refund")[0].body["referenceIdToRefund"] == paid.reference
    assert (await mtn.refund_status(refund)).outcome is Outcome.SUCCEEDED
    # Without the collection's reference, a refund goes as a transfer to the number.
    plain = transfer(refund_of=None)
    await mtn.refund(plain)
    assert plain.reference in {t.reference for t in fake.received("transfer")}


async def test_a_request_mtn_refuses_as_it_stands_fails(mtn: MtnMomoConnector) -> None:
    result = await mtn.collect(collection(number="+22997"))  # not an MSISDN: 400
    assert result.outcome is Outcome.FAILED and result.reason == "invalid_party"


@pytest.mark.parametrize(
    "fault", ["error_500", "error_500_after_accept", "reset_after_accept", "hang"]
)
async def test_what_says_nothing_for_sure_is_unknown_never_failed(
    fake: MtnMomoFake, mtn: MtnMomoConnector, fault: str
) -> None:
    fake.fault(fault, path="transfer")
    assert_unknown(await mtn.disburse(transfer()))


async def test_a_rate_limited_status_query_is_unknown(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    asked = transfer()
    await mtn.disburse(asked)
    fake.status_rate_limit = 1
    answers = [await mtn.disbursement_status(asked) for _ in range(3)]
    assert answers[0].outcome is Outcome.SUCCEEDED
    assert_unknown(answers[-1])


async def test_concurrent_calls_share_one_token_per_product(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    await asyncio.gather(*(mtn.collect(collection()) for _ in range(20)))
    await asyncio.gather(*(mtn.disburse(transfer()) for _ in range(5)))
    assert fake.tokens_issued == {"collection": 1, "disbursement": 1}


async def test_a_refused_token_is_fetched_again_once(
    fake: MtnMomoFake, mtn: MtnMomoConnector
) -> None:
    await mtn.collect(collection())
    fake._tokens.clear()  # MTN no longer honours the token it gave
    assert (await mtn.collect(collection())).outcome is Outcome.PENDING
    assert fake.tokens_issued["collection"] == 2


async def test_an_expiring_token_is_replaced_before_its_end(fake: MtnMomoFake) -> None:
    fake.token_ttl = 1  # shorter than the margin: used for half its life
    connector = MtnMomoConnector(config(fake))
    try:
        await connector.collect(collection())
        await asyncio.sleep(0.6)
        await connector.collect(collection())
        assert fake.tokens_issued["collection"] == 2
    finally:
        await connector.aclose()


async def test_refused_credentials_fail_plainly(fake: MtnMomoFake) -> None:
    secrets = {**SECRETS, "api_key": "wrong"}
    connector = MtnMomoConnector(config(fake, secrets=secrets))
    try:
        result = await connector.collect(collection())
        assert result.outcome is Outcome.FAILED
        assert (result.reason or "").startswith("operator_refused_credentials")
        assert fake.received("collect") == []
    finally:
        await connector.aclose()


async def test_no_secret_ever_reaches_an_exchange(fake: MtnMomoFake, mtn: MtnMomoConnector) -> None:
    paid = collection()
    results = [
        await mtn.collect(paid),
        await mtn.collection_status(paid),
        await mtn.disburse(transfer()),
        await mtn.refund(transfer(refund_of=paid.reference)),
    ]
    fake._tokens.clear()
    results.append(await mtn.collect(collection()))
    recorded = json.dumps([dataclasses.asdict(e) for r in results for e in r.exchanges])
    tokens = [r.headers["authorization"] for r in fake.requests]
    for secret in [API_USER, API_KEY, *SUBSCRIPTION_KEYS.values(), *tokens]:
        assert secret.removeprefix("Bearer ").removeprefix("Basic ") not in recorded
    # A token's answer is never recorded, even when the token is refused.
    refused = MtnMomoConnector(config(fake, secrets={**SECRETS, "api_key": "wrong"}))
    try:
        [token] = (await refused.collect(collection())).exchanges
    finally:
        await refused.aclose()
    assert (token.action, token.response_status, token.response_body) == ("token", 401, None)


async def test_check_reads_both_balances(mtn: MtnMomoConnector) -> None:
    report = await mtn.check()
    assert report.ok, report.detail
    assert report.facts == {"collection": "1000000 EUR", "disbursement": "1000000 EUR"}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"secrets": {**SECRETS, "api_key": "wrong"}}, "api_user/api_key"),
        ({"secrets": {**SECRETS, "collection_subscription_key": "x"}}, "collection_subscription"),
        (
            {"secrets": {**SECRETS, "disbursement_subscription_key": "x"}},
            "disbursement_subscription",
        ),
        ({"settings": {"target_environment": "mtnbenin"}}, "target_environment"),
        ({"base_url": "http://127.0.0.1:9"}, "no answer"),
    ],
)
async def test_check_says_what_is_wrong(
    fake: MtnMomoFake, change: dict[str, object], said: str
) -> None:
    connector = MtnMomoConnector(config(fake, **change))
    try:
        report = await connector.check()
        assert not report.ok and said in report.detail, report.detail
    finally:
        await connector.aclose()


async def test_callbacks_are_read_as_unverified_hints(mtn: MtnMomoConnector) -> None:
    reference = str(uuid.uuid4())
    notice = {"externalId": reference, "status": "FAILED", "reason": "APPROVAL_REJECTED"}
    update = await mtn.parse_callback(_notice(json.dumps(notice).encode()))
    assert update is not None and update.reference == reference and not update.verified
    assert (update.result.outcome, update.result.reason) == (Outcome.FAILED, "approval_rejected")
    with_id = {"referenceId": reference, "status": "SUCCESSFUL"}
    assert (await mtn.parse_callback(_notice(json.dumps(with_id).encode()))).reference == reference  # type: ignore[union-attr]
    assert await mtn.parse_callback(_notice(b"not json")) is None
    assert await mtn.parse_callback(_notice(b'{"status": "SUCCESSFUL"}')) is None


def _notice(body: bytes) -> Notice:
    return Notice("PUT", "http://127.0.0.1/api/v1/operator-callbacks/mtn", {}, body)
