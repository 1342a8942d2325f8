"""Connector accounts and routes, through the service and the registry (in process)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest

from cauri.connectors.errors import ConnectorError
from cauri.connectors.registry import OperatorRegistry
from cauri.connectors.service import AccountDefinition, connectors
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from tests.connectors.builders import SECRET, Builds, add_fake, in_session, set_route
from tests.payments.builders import FakeLiveOperator, pay
from tests.support import assert_error, make_merchant, momo_body, scalar


async def add(runtime: Runtime, *, keep_secrets: bool = False, **fields: Any) -> None:
    secret_key = fields.pop("secret_key", runtime.settings.secret_key)
    definition = AccountDefinition(
        name="fake-bj",
        kind="fake",
        environment="sandbox",
        base_url="https://fake.example",
        settings={"region": "bj"},
        secrets={"token": SECRET},
    )
    async with unit_of_work(runtime.sessionmaker) as session:
        await connectors.add(
            session,
            replace(definition, **fields),
            secret_key=secret_key,
            now=runtime.clock.now(),
            keep_secrets=keep_secrets,
        )


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"kind": "nope"}, "Type de connecteur inconnu : nope"),
        ({"environment": "staging"}, "Environnement inconnu"),
        ({"base_url": "fake.example"}, "URL de base invalide"),
        ({"base_url": "ftp://fake.example"}, "URL de base invalide"),
        ({"settings": {}}, "Réglage manquant pour le type fake : region"),
        ({"settings": {"region": "bj", "colour": "x"}}, "Réglage inconnu du type fake : colour"),
        ({"secrets": {}}, "Secret manquant pour le type fake : token"),
        ({"secrets": {"token": SECRET, "pin": "1"}}, "Secret inconnu du type fake : pin"),
        ({"name": "Fake BJ"}, "Nom de connecteur invalide"),
        ({"name": "simulator"}, "Nom de connecteur invalide"),
        ({"secret_key": None}, "CAURI_SECRET_KEY n'est pas défini"),
        # Issue 23: production credentials never cross a network in clear.
        (
            {"environment": "production", "base_url": "http://fake.example"},
            "URL de base refusée pour la production : http://fake.example",
        ),
        (
            {"environment": "production", "base_url": "http://10.0.0.7:8080"},
            "https:// obligatoire",
        ),
    ],
)
async def test_add_refuses_in_plain_words(
    runtime: Runtime, builds: Builds, fields: dict[str, object], words: str
) -> None:
    with pytest.raises(ConnectorError, match=words) as raised:
        await add(runtime, **fields)
    assert SECRET not in raised.value.message
    assert await scalar(runtime, "SELECT count(*) FROM connector_accounts") == 0


async def test_mtn_momo_names_are_the_contract(runtime: Runtime) -> None:
    fields = {
        "kind": "mtn_momo",
        "settings": {"target_environment": "sandbox", "currency": "EUR"},
        "secrets": dict.fromkeys(
            (
                "api_user",
                "api_key",
                "collection_subscription_key",
                "disbursement_subscription_key",
            ),
            SECRET,
        ),
    }
    await add(runtime, name="mtn-bj", **fields)
    with pytest.raises(ConnectorError, match=r"Secret manquant.*disbursement_subscription_key"):
        await add(
            runtime,
            name="mtn-ci",
            **(fields | {"secrets": {k: SECRET for k in list(fields["secrets"])[:3]}}),
        )


async def test_secrets_are_never_in_the_database_in_clear(runtime: Runtime, builds: Builds) -> None:
    await add(runtime)
    raw = await scalar(runtime, "SELECT secrets FROM connector_accounts")
    assert isinstance(raw, bytes) and SECRET.encode() not in raw
    whole = await scalar(runtime, "SELECT row_to_json(c)::text FROM connector_accounts c")
    assert SECRET not in whole and '"token"' in whole  # the name is kept, not the value


async def test_adding_over_a_name_replaces_it(runtime: Runtime, builds: Builds) -> None:
    await add(runtime)
    created = await scalar(runtime, "SELECT created_at FROM connector_accounts")
    runtime.clock.advance(60)
    async with unit_of_work(runtime.sessionmaker) as session:
        account, replaced = await connectors.add(
            session,
            AccountDefinition(
                name="fake-bj",
                kind="fake",
                environment="production",
                base_url="https://api.fake.example",
                settings={"region": "ci"},
                secrets={"token": "other"},
            ),
            secret_key=runtime.settings.secret_key,
            now=runtime.clock.now(),
        )
    assert replaced and account.created_at == created and account.updated_at > created
    assert await scalar(runtime, "SELECT count(*) FROM connector_accounts") == 1


async def test_routes_are_checked(runtime: Runtime, builds: Builds) -> None:
    await add_fake(runtime)
    await add_fake(runtime, "collector", kind="collect_only")
    for operator, changes, words in [
        ("zz_nowhere", {"collect": "fake-bj"}, "Opérateur inconnu"),
        ("mtn", {"collect": "ghost"}, "Aucun connecteur ne s'appelle ghost"),
        ("visa", {"disburse": "fake-bj"}, "carte"),
        ("VISA", {"refund": "fake-bj"}, "carte"),
        ("mtn", {"refund": "collector"}, "ne sait pas faire « refund »"),
        ("mtn", {}, "Rien à changer"),
    ]:
        with pytest.raises(ConnectorError, match=words):
            await set_route(runtime, operator, **changes)
    await set_route(runtime, "MTN", collect="collector", disburse="fake-bj", refund="fake-bj")
    await set_route(runtime, "visa", collect="fake-bj")
    await set_route(runtime, "mtn", disburse=None)
    async with runtime.sessionmaker() as session:
        rows = {r.operator: dict(r.connectors) for r in await connectors.routes(session)}
        views = {v.account.name: list(v.routes) for v in await connectors.accounts(session)}
    assert rows == {
        "mtn": {"collect": "collector", "disburse": None, "refund": "fake-bj"},
        "visa": {"collect": "fake-bj", "disburse": None, "refund": None},
    }
    assert views == {
        "collector": [("mtn", "collect")],
        "fake-bj": [("mtn", "refund"), ("visa", "collect")],
    }


async def test_a_route_change_applies_at_once(runtime: Runtime, builds: Builds) -> None:
    registry = runtime.operators
    await add_fake(runtime, "first")
    await add_fake(runtime, "second")
    async with runtime.sessionmaker() as session:
        assert await registry.route(session, "mtn", "collect", livemode=True) is None
        assert await registry.routed(session, "collect", livemode=True) == frozenset()
    await set_route(runtime, "mtn", collect="first")
    async with runtime.sessionmaker() as session:
        one = await registry.route(session, "MTN", "collect", livemode=True)
        again = await registry.route(session, "mtn", "collect", livemode=True)
        assert await registry.route(session, "mtn", "disburse", livemode=True) is None
        assert await registry.routed(session, "collect", livemode=True) == {"mtn"}
    assert one is not None and again is not None
    assert one.connector == "first" and again.adapter is one.adapter  # built once, reused
    assert one.adapter.config.secrets == {"token": SECRET}
    assert one.adapter.config.timeout == runtime.settings.operator_timeout
    await set_route(runtime, "mtn", collect="second")
    async with runtime.sessionmaker() as session:
        other = await registry.route(session, "mtn", "collect", livemode=True)
        by_name = await registry.by_name(session, "first")
    assert other is not None and other.connector == "second"
    assert by_name is not None and by_name.adapter is one.adapter
    assert len(builds.made) == 2
    await set_route(runtime, "mtn", collect=None)
    async with runtime.sessionmaker() as session:
        assert await registry.route(session, "mtn", "collect", livemode=True) is None
    await registry.aclose()
    assert all(connector.closed for connector in builds.made)


async def test_an_account_changed_is_rebuilt(runtime: Runtime, builds: Builds) -> None:
    await add_fake(runtime, token="old-token")
    await set_route(runtime, "mtn", collect="fake-bj")
    async with runtime.sessionmaker() as session:
        before = await runtime.operators.route(session, "mtn", "collect", livemode=True)
    runtime.clock.advance(1)
    await add_fake(runtime, token=SECRET)
    async with runtime.sessionmaker() as session:
        after = await runtime.operators.route(session, "mtn", "collect", livemode=True)
    assert before is not None and after is not None and after.adapter is not before.adapter
    assert after.adapter.config.secrets == {"token": SECRET}


async def test_test_mode_and_in_process_adapters(runtime: Runtime, builds: Builds) -> None:
    registry = runtime.operators
    await add_fake(runtime)
    await set_route(runtime, "mtn", collect="fake-bj")
    in_process = FakeLiveOperator()
    registry.live_adapters["MTN"] = in_process
    async with runtime.sessionmaker() as session:
        test = await registry.route(session, "mtn", "collect", livemode=False)
        live = await registry.route(session, "mtn", "collect", livemode=True)
        assert await registry.routed(session, "refund", livemode=True) == {"mtn"}
        assert len(await registry.routed(session, "refund", livemode=False)) == 21
        assert (await registry.by_name(session, "adapter:mtn")).adapter is in_process
        assert (await registry.by_name(session, "simulator")).adapter is registry.simulator
        assert await registry.by_name(session, "adapter:moov") is None
        assert await registry.by_name(session, "ghost") is None
    assert test is not None and test.connector == "simulator"
    assert test.adapter is registry.simulator
    assert live is not None and live.connector == "adapter:mtn" and live.adapter is in_process
    assert registry.in_process("Mtn", livemode=True) is in_process
    assert builds.made == []  # the route was never needed


async def test_a_connector_that_cannot_be_built_is_unrouted(
    runtime: Runtime, builds: Builds
) -> None:
    await add_fake(runtime)
    await set_route(runtime, "mtn", collect="fake-bj")
    rotated = OperatorRegistry(runtime.operators.simulator, secret_key="r" * 32)
    keyless = OperatorRegistry(runtime.operators.simulator, secret_key=None)
    async with runtime.sessionmaker() as session:
        for registry in (rotated, keyless):
            assert await registry.route(session, "mtn", "collect", livemode=True) is None
            assert await registry.routed(session, "collect", livemode=True) == frozenset()
        builds.fail = RuntimeError("broken kind")
        assert await runtime.operators.route(session, "mtn", "collect", livemode=True) is None
        assert await runtime.operators.route(session, "mtn", "collect", livemode=True) is None
    assert builds.made == []


async def test_check_says_what_is_wrong(runtime: Runtime, builds: Builds) -> None:
    await add_fake(runtime, "good")
    await add_fake(runtime, "bad", token="wrong")
    async with runtime.sessionmaker() as session:
        good = await connectors.check(session, runtime.operators, "good")
        bad = await connectors.check(session, runtime.operators, "bad")
        rotated = await connectors.check(
            session, OperatorRegistry(runtime.operators.simulator, secret_key="r" * 32), "good"
        )
        with pytest.raises(ConnectorError, match="ghost"):
            await connectors.check(session, runtime.operators, "ghost")
    assert good.ok and good.facts == {"balance": "1000 XOF"}
    assert not bad.ok and "401" in bad.detail
    assert not rotated.ok and "CAURI_SECRET_KEY" in rotated.detail
    assert all(connector.closed for connector in builds.made)


async def modes(client: httpx.AsyncClient, headers: dict[str, str]) -> list[str]:
    response = await client.get("/api/v1/payment-modes", headers=headers)
    assert response.status_code == 200, response.text
    return [mode["operator"] for mode in response.json()["data"]]


async def test_payment_modes_follow_the_routes_at_once(
    client: httpx.AsyncClient, runtime: Runtime, builds: Builds
) -> None:
    merchant = await make_merchant(runtime)
    live = merchant.headers(livemode=True)
    assert await modes(client, live) == []
    assert len(await modes(client, merchant.headers())) == 21
    await add_fake(runtime)
    await set_route(runtime, "wave_sn", collect="fake-bj")
    await set_route(runtime, "mtn", disburse="fake-bj", refund="fake-bj")
    assert await modes(client, live) == ["wave_sn"]  # mtn cannot collect: not a payment mode
    await set_route(runtime, "mtn", collect="fake-bj")
    assert sorted(await modes(client, live)) == ["mtn", "wave_sn"]
    assert len(await modes(client, merchant.headers())) == 21
    # A live payment on an operator with no route is refused, as before.
    error = assert_error(
        await pay(client, live, momo_body(operator="moov", phone_number="22996000000")),
        422,
        "invalid_request",
    )
    assert "operator" in error["details"]
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0
    await set_route(runtime, "wave_sn", collect=None)
    assert await modes(client, live) == ["mtn"]


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        (
            {
                "kind": "pawapay",
                "settings": {"providers": "moov_tg"},
                "secrets": {"api_token": "t"},
            },
            "Réglage providers illisible",
        ),
        (
            {
                "kind": "pawapay",
                "settings": {"signed_callbacks": "yes"},
                "secrets": {"api_token": "t"},
            },
            "signed_callbacks : true ou false",
        ),
        (
            {"kind": "wave", "settings": {"return_url": "shop.example"}, "secrets": {}},
            "return_url",
        ),
        (
            {"kind": "wave", "settings": {}, "secrets": {"api_key": "k", "webhook_secret": "w"}},
            "Réglage manquant pour le type wave : return_url",
        ),
    ],
)
async def test_pawapay_and_wave_settings_are_read_before_they_are_kept(
    runtime: Runtime, fields: dict[str, object], words: str
) -> None:
    with pytest.raises(ConnectorError, match=words):
        await add(runtime, name="acct", **fields)
    assert await scalar(runtime, "SELECT count(*) FROM connector_accounts") == 0


async def test_a_route_names_only_operators_the_kind_carries(runtime: Runtime) -> None:
    await add(
        runtime,
        name="wave-sn",
        kind="wave",
        settings={"return_url": "https://shop.example/paid"},
        secrets={"api_key": "k", "webhook_secret": "w"},
    )
    await add(
        runtime,
        name="pawapay",
        kind="pawapay",
        settings={"providers": "moov_tg=MOOV_TGO"},
        secrets={"api_token": "t"},
    )
    with pytest.raises(ConnectorError, match="ne porte pas mtn"):
        await set_route(runtime, "mtn", collect="wave-sn")
    with pytest.raises(ConnectorError, match="ne porte pas coris"):
        await set_route(runtime, "coris", collect="pawapay")
    await set_route(runtime, "wave_sn", collect="wave-sn", refund="wave-sn")
    # An operator the account's own `providers` setting adds is carried.
    await set_route(runtime, "moov_tg", collect="pawapay", disburse="pawapay")


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:8080", "http://localhost:8080/api", "http://[::1]:9000"]
)
async def test_production_over_plain_http_only_to_this_machine(
    runtime: Runtime, builds: Builds, base_url: str
) -> None:
    """Loopback never crosses a network: the operators' contract fakes and local tunnels."""
    await add(runtime, environment="production", base_url=base_url)
    assert await scalar(runtime, "SELECT base_url FROM connector_accounts") == base_url


async def edit(runtime: Runtime, **fields: object) -> None:
    """The console's edit: a credential not given keeps its stored value."""
    await add(runtime, keep_secrets=True, **fields)


async def test_credentials_do_not_follow_a_new_base_url(runtime: Runtime, builds: Builds) -> None:
    """Issue 23: an administrator who cannot read an account's credentials cannot send them
    to a host of theirs by editing its base URL and pressing « vérifier »."""
    await add(runtime)
    stored = await scalar(runtime, "SELECT secrets FROM connector_accounts")
    await edit(runtime, settings={"region": "ci"}, secrets={})  # same URL: kept
    with pytest.raises(ConnectorError, match="saisissez-les de nouveau \\(token\\)") as raised:
        await edit(runtime, base_url="https://attacker.example", secrets={})
    assert "https://fake.example → https://attacker.example" in raised.value.message
    assert await scalar(runtime, "SELECT base_url FROM connector_accounts") == (
        "https://fake.example"
    )
    await edit(runtime, base_url="https://api.fake.example", secrets={"token": "new"})
    assert await scalar(runtime, "SELECT secrets FROM connector_accounts") != stored
    routed = await in_session(runtime, lambda s: runtime.operators.by_name(s, "fake-bj"))
    assert routed.adapter.config.secrets == {"token": "new"}
