"""Each connector's balance (GivesBalances) against its operator's contract fake, over real
HTTP: what the fake's wallet holds after what it booked (collections in, payouts and refunds
out, its fees), summed as docs/OPERATORS.md says; and an operator that fails to say it is
StatementUnavailable, never a wrong number."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from decimal import Decimal
from typing import TypeVar

import pytest

from cauri.operators import balances
from cauri.operators.cinetpay import KIND as CINETPAY
from cauri.operators.cinetpay.connector import CinetPayTransfersConnector
from cauri.operators.config import ConnectorConfig
from cauri.operators.exchange import NetworkConnector
from cauri.operators.mtn_momo.connector import MtnMomoConnector
from cauri.operators.pawapay.connector import PawapayConnector
from cauri.operators.protocol import (
    Collection,
    Disbursement,
    GivesBalances,
    Outcome,
    StatementUnavailable,
)
from cauri.operators.wave.connector import WaveConnector
from tests.fakes.cinetpay import CinetPayFake
from tests.fakes.pawapay import PawapayFake
from tests.fakes.wave import WaveFake
from tests.operators.mtn_live import NUMBER, SECRETS, mtn_fake

Connector = TypeVar("Connector", bound=NetworkConnector)


@pytest.fixture
async def closing() -> AsyncIterator[Callable[[Connector], Connector]]:
    """Connectors built in a test, closed after it."""
    opened: list[NetworkConnector] = []

    def keep(connector: Connector) -> Connector:
        opened.append(connector)
        return connector

    yield keep
    for connector in opened:
        await connector.aclose()


def config(
    kind: str, base_url: str, settings: dict[str, str], secrets: dict[str, str]
) -> ConnectorConfig:
    return ConnectorConfig(kind, kind, "sandbox", base_url, settings, secrets, 0.5, 0.5)


def collection(operator: str, number: str, amount: int, currency: str = "XOF") -> Collection:
    return Collection(str(uuid.uuid4()), operator, amount, currency, number, None, "Commande")


def payout(
    operator: str, number: str, amount: int, refund_of: str | None = None, **more: str
) -> Disbursement:
    reference = str(uuid.uuid4())
    return Disbursement(reference, operator, amount, "XOF", number, refund_of=refund_of, **more)


def test_an_operators_amount_is_read_exactly_or_not_at_all() -> None:
    assert balances.minor_units("1000012.34", "EUR", "x") == ("EUR", 100001234)
    assert balances.minor_units(663, "xof", "x") == ("XOF", 663)
    assert balances.minor_units(Decimal("5.10"), "USD", "x") == ("USD", 510)
    unreadable = [("12.345", "EUR"), ("1.5", "XOF"), (1.5, "XOF"), (True, "XOF"), ("abc", "XOF")]
    unreadable += [("NaN", "XOF"), (None, "XOF"), ("10", "GHS"), ("10", None)]
    for amount, currency in unreadable:
        with pytest.raises(StatementUnavailable):
            balances.minor_units(amount, currency, "x")


async def test_mtn_sums_its_collection_and_disbursement_accounts(
    closing: Callable[[MtnMomoConnector], MtnMomoConnector],
) -> None:
    with mtn_fake() as fake:
        fake.callback_mode = "drop"
        settings = {"target_environment": "sandbox", "currency": "EUR"}
        mtn = closing(MtnMomoConnector(config("mtn_momo", fake.base_url, settings, SECRETS)))
        paid = collection("mtn", NUMBER, 5000)
        await mtn.collect(paid)
        await mtn.disburse(payout("mtn", NUMBER, 1200))
        await mtn.refund(payout("mtn", NUMBER, 300, refund_of=paid.reference))
        await mtn.collect(collection("mtn", "46733123450", 900))  # failed: moves nothing
        assert isinstance(mtn, GivesBalances)
        # 1,000,000 in each account; the sandbox labels every amount EUR: in cents.
        assert await mtn.balances() == {"EUR": (2_000_000 + 5000 - 1200 - 300) * 100}
        assert fake.balance("collection") == Decimal(1_005_000)

        fake.fault("error_500", path="/disbursement/v1_0/account/balance")
        with pytest.raises(StatementUnavailable, match="disbursement: MTN answered 500"):
            await mtn.balances()


async def test_pawapay_sums_its_wallets_per_currency(
    closing: Callable[[PawapayConnector], PawapayConnector],
) -> None:
    with PawapayFake(api_token="token") as fake:
        fake.callback_mode = "drop"
        pawapay = closing(
            PawapayConnector(config("pawapay", fake.base_url, {}, {"api_token": "token"}))
        )
        paid = collection("moov", "22995123456", 5000)
        await pawapay.collect(paid)
        await pawapay.collect(collection("mtn_cg", "242061234567", 2000, "XAF"))
        await pawapay.disburse(payout("orange_ci", "2250712345678", 1500))
        await pawapay.refund(payout("moov", "22995123456", 500, refund_of=paid.reference))
        # One wallet per country of the configuration: four in XOF, Congo's in XAF.
        xof = sum(1 for wallet in fake.wallets() if wallet["currency"] == "XOF")
        assert await pawapay.balances() == {
            "XOF": xof * 1_000_000 + 5000 - 1500 - 500,
            "XAF": 1_000_000 + 2000,
        }

        fake.fault("hang", path="/v2/wallet-balances")
        with pytest.raises(StatementUnavailable, match="HTTP None"):
            await pawapay.balances()


async def test_wave_gives_its_wallets_balance_net_of_its_fees(
    closing: Callable[[WaveConnector], WaveConnector],
) -> None:
    key = "wave_sn_prod_" + "BalanceTestKeyOfTheFakeWallet0001"
    with WaveFake(key, webhook_secret="secret") as fake:
        settings, secrets = {"return_url": "https://shop.example/merci"}, {"api_key": key}
        wave = closing(
            WaveConnector(
                config("wave", fake.base_url, settings, secrets | {"webhook_secret": "s"})
            )
        )
        paid = collection("wave_sn", "221771234567", 10_000)
        await wave.collect(paid)
        [session] = fake.sessions.values()
        fake.pay(session.id)
        sent = await wave.disburse(payout("wave_sn", "221771234567", 2000))
        assert sent.outcome is Outcome.SUCCEEDED
        # Wave's 1 % on each: 100 of the checkout, 20 of the payout.
        assert await wave.balances() == {"XOF": 1_000_000 + 10_000 - 100 - 2000 - 20}

        fake.keys[key].permissions.discard("balance_api")
        with pytest.raises(StatementUnavailable, match="HTTP 403 invalid_wallet"):
            await wave.balances()


async def test_cinetpay_gives_its_transfer_balance_to_an_account_with_transfers(
    closing: Callable[[CinetPayTransfersConnector], CinetPayTransfersConnector],
) -> None:
    secrets = {"apikey": "cp-apikey", "secret_key": "cp-secret", "transfer_password": "pw"}
    with CinetPayFake(
        apikey="cp-apikey", site_id="445160", secret_key="cp-secret", transfer_password="pw"
    ) as fake:
        fake.notify_mode = "drop"
        settings = {
            "site_id": "445160",
            "return_url": "https://shop.example/merci",
            "transfer_base_url": fake.transfer_base_url,
        }
        built = config("cinetpay", fake.checkout_base_url, settings, secrets)
        assert isinstance(CINETPAY.build(built), CinetPayTransfersConnector)
        unpaid = CINETPAY.build(replace(built, secrets=secrets | {"transfer_password": ""}))
        assert not isinstance(unpaid, GivesBalances)
        cinetpay = closing(CinetPayTransfersConnector(built))
        sent = payout("orange_ci", "2250712345678", 1000, callback_url="http://127.0.0.1:9/n")
        assert (await cinetpay.disburse(sent)).outcome is Outcome.PENDING
        # Collections are not in it: the transfer account is its own, funded apart.
        assert await cinetpay.balances() == {"XOF": 1_000_000 - 1000}

        fake.fault("error_500", path="/v1/transfer/check/balance")
        with pytest.raises(StatementUnavailable, match="no answer"):
            await cinetpay.balances()
