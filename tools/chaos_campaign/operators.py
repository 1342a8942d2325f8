"""The five operators as the campaign meets them: each contract fake from tests/fakes, wired
to Cauri as the staff would wire the operator (a connector account and its routes), the
customer's side of a payment that needs one (Wave's app, Orange's and CinetPay's pages), the
faults the operator's documentation describes, forged notifications, and what the operator
says it moved (read back from the fake once the campaign is over).

Each operation is offered only where the operator's API offers it: Orange Money collects
only, CinetPay collects and pays out (its Transfer API) but does not refund, Wave refunds a
payment whole only, MTN and pawaPay refund part of one."""

from __future__ import annotations

import contextlib
import random
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, Protocol

import httpx

from tests.fakes.cinetpay import CinetPayFake
from tests.fakes.mtn_momo import MtnMomoFake
from tests.fakes.orange_money import OrangeMoneyFake
from tests.fakes.pawapay import PawapayFake
from tests.fakes.wave import WaveFake

# Faults every fake reproduces on its initiation endpoints; `rate_limit` (429) only where
# the operator documents one.
FAULTS = ("hang", "error_500", "error_500_after_accept", "reset_after_accept", "hang_after_accept")
# The notification modes every fake offers, "send" weighted as the usual case.
NOTICE_MODES = ("send", "send", "send", "drop", "delay", "duplicate", "reorder")
ALL = ("collect", "disburse", "refund")
FAILING = "666"  # the last digits of the numbers each fake is told to fail


@dataclass(frozen=True)
class Moved:
    """One movement of money the operator says happened: a collection, a disbursement or a
    refund, with the identifiers Cauri sent (any of which names Cauri's operation)."""

    connector: str
    action: str  # collect | disburse | refund
    keys: tuple[str, ...]
    amount: Decimal
    refunds: str | None = None  # a refund's collection, by one of its keys


@dataclass(frozen=True)
class Route:
    operator: str
    actions: tuple[str, ...]
    number: str  # a number of that operator the fake completes
    failing: str | None  # one it fails, when the operator's sandbox has such numbers


class Rig(Protocol):
    connector: str
    kind: str
    environment: str
    routes: tuple[Route, ...]
    refunds: str  # partial | whole | none
    faults: tuple[str, ...]

    @property
    def base_url(self) -> str: ...

    def settings(self) -> dict[str, str]: ...
    def secrets(self) -> dict[str, str]: ...
    def customer_acts(self, reference: str, pays: bool) -> bool: ...
    def fault(self, kind: str) -> None: ...
    def notices(self, mode: str) -> None: ...
    def forge(self, callbacks: str, reference: str) -> None: ...
    def moved(self) -> list[Moved]: ...


def _callback_url(public_url: str, connector: str, reference: str | None = None) -> str:
    tail = f"/{reference}" if reference else ""
    return f"{public_url}/api/v1/operator-callbacks/{connector}{tail}"


def _failing(number: str) -> str:
    return number[: -len(FAILING)] + FAILING


def _forged(send: Any, *args: Any, **kwargs: Any) -> None:
    """A forged notice is refused or taken as a hint: only Cauri's answer matters, not ours."""
    with contextlib.suppress(httpx.HTTPError):
        send(*args, **kwargs)


class Mtn:
    connector, kind, environment = "mtn-sandbox", "mtn_momo", "sandbox"
    refunds = "partial"
    faults = FAULTS
    API_USER = "5f1c4a2e-8d3b-4c6a-9e7f-0a1b2c3d4e5f"
    KEYS: ClassVar = {"collection": "collection-primary-key", "disbursement": "disb-primary-key"}

    def __init__(self, public_url: str) -> None:
        self.fake = MtnMomoFake(
            api_user=self.API_USER, api_key="mtn-api-key", subscription_keys=self.KEYS
        )
        number = "22997123456"
        self.routes: tuple[Route, ...] = (Route("mtn", ALL, number, _failing(number)),)
        self.fake.outcome_for(_failing(number), "FAILED", "PAYER_NOT_FOUND")

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def settings(self) -> dict[str, str]:
        return {"target_environment": "sandbox", "currency": "EUR"}

    def secrets(self) -> dict[str, str]:
        return {
            "api_user": self.API_USER,
            "api_key": "mtn-api-key",
            "collection_subscription_key": self.KEYS["collection"],
            "disbursement_subscription_key": self.KEYS["disbursement"],
        }

    def customer_acts(self, reference: str, pays: bool) -> bool:
        return True  # the request to pay reaches the customer's phone: the number decides

    def fault(self, kind: str) -> None:
        self.fake.fault(kind)

    def notices(self, mode: str) -> None:
        self.fake.callback_mode = mode

    def forge(self, callbacks: str, reference: str) -> None:
        body = {"referenceId": reference, "status": "SUCCESSFUL", "amount": "1", "currency": "EUR"}
        _forged(
            self.fake.send_forged_callback,
            _callback_url(callbacks, self.connector, reference),
            body,
        )

    def moved(self) -> list[Moved]:
        actions = {"collect": "collect", "transfer": "disburse", "refund": "refund"}
        return [
            Moved(
                self.connector,
                actions[t.kind],
                (t.reference, str(t.body.get("externalId", ""))),
                Decimal(str(t.body["amount"])),
                t.body.get("referenceIdToRefund"),
            )
            for t in list(self.fake.transactions.values())
            if t.status == "SUCCESSFUL"
        ]


class Pawapay:
    connector, kind, environment = "pawapay", "pawapay", "sandbox"
    refunds = "partial"
    faults = FAULTS

    def __init__(self, public_url: str) -> None:
        url = _callback_url(public_url, self.connector)
        self.fake = PawapayFake(
            api_token="pawapay-api-token",  # noqa: S106 (the fake's, for its sandbox)
            signed_callbacks=True,
            callback_urls={"deposit": url, "payout": url, "refund": url},
        )
        moov, mtn_ci = "22995123456", "2250512345678"
        self.routes: tuple[Route, ...] = (
            Route("moov", ALL, moov, _failing(moov)),
            Route("mtn_ci", ALL, mtn_ci, _failing(mtn_ci)),
        )
        for route in self.routes:
            assert route.failing is not None
            self.fake.outcome_for(route.failing, "FAILED", "UNSPECIFIED_FAILURE")

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def settings(self) -> dict[str, str]:
        return {"signed_callbacks": "true"}

    def secrets(self) -> dict[str, str]:
        return {"api_token": "pawapay-api-token"}

    def customer_acts(self, reference: str, pays: bool) -> bool:
        return True  # the number decides

    def fault(self, kind: str) -> None:
        self.fake.fault(kind)

    def notices(self, mode: str) -> None:
        self.fake.callback_mode = mode

    def forge(self, callbacks: str, reference: str) -> None:
        body = {"depositId": reference, "status": "COMPLETED", "amount": "1", "currency": "XOF"}
        _forged(self.fake.send_forged_callback, "deposit", body, signed_with_wrong_key=True)

    def moved(self) -> list[Moved]:
        actions = {"deposit": "collect", "payout": "disburse", "refund": "refund"}
        stores = (self.fake.deposits, self.fake.payouts, self.fake.refunds)
        return [
            Moved(
                self.connector,
                actions[p.kind],
                (p.id, str(p.body.get("clientReferenceId", ""))),
                p.amount,
                p.deposit_id,
            )
            for store in stores
            for p in list(store.values())
            if p.status == "COMPLETED"
        ]


class Wave:
    connector, kind, environment = "wave-sn", "wave", "production"
    refunds = "whole"
    faults = (*FAULTS, "rate_limit")
    API_KEY = "wave_sn_prod_" + "CauriChaosKeyOfTheFakeWalletxxxxx1"
    WEBHOOK_SECRET = "wave_sn_WHS_" + "caurichaossecretofthefakewebhook0123456789abcdefghij"

    def __init__(self, public_url: str) -> None:
        self.fake = WaveFake(
            self.API_KEY,
            webhook_secret=self.WEBHOOK_SECRET,
            webhook_url=_callback_url(public_url, self.connector),
            balance="1000000000",
        )
        self.routes: tuple[Route, ...] = (Route("wave_sn", ALL, "221771234567", None),)

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def settings(self) -> dict[str, str]:
        return {"return_url": "https://shop.example/merci"}

    def secrets(self) -> dict[str, str]:
        return {"api_key": self.API_KEY, "webhook_secret": self.WEBHOOK_SECRET}

    def customer_acts(self, reference: str, pays: bool) -> bool:
        """The customer approves in the Wave app (a failed attempt leaves the session open
        until it expires, half an hour later: the campaign's customers pay)."""
        sessions = [s for s in list(self.fake.sessions.values()) if s.client_reference == reference]
        if not sessions:
            return False
        with contextlib.suppress(ValueError):  # already paid (a retried step)
            self.fake.pay(sessions[0].id)
        return True

    def fault(self, kind: str) -> None:
        self.fake.fault(kind)

    def notices(self, mode: str) -> None:
        self.fake.webhook_mode = mode

    def forge(self, callbacks: str, reference: str) -> None:
        body = {
            "id": "AE_" + uuid.uuid4().hex[:16],
            "type": "checkout.session.completed",
            "data": {"client_reference": reference, "amount": "1", "currency": "XOF"},
        }
        _forged(self.fake.send_forged_webhook, body)

    def moved(self) -> list[Moved]:
        sessions = list(self.fake.sessions.values())
        collected = [
            Moved(self.connector, "collect", (s.id, s.client_reference or ""), Decimal(s.amount))
            for s in sessions
            if s.payment_status == "succeeded"
        ]
        # Wave refunds a session whole: what went back is what the customer paid.
        refunded = [
            Moved(
                self.connector,
                "refund",
                (s.client_reference or "", s.id),
                Decimal(s.amount),
                s.client_reference,
            )
            for s in sessions
            if s.refunded
        ]
        paid_out = [
            Moved(
                self.connector,
                "disburse",
                (p.id, p.client_reference or "", p.idempotency_key),
                Decimal(p.receive_amount),
            )
            for p in list(self.fake.payouts.values())
            if p.status == "succeeded"
        ]
        return collected + refunded + paid_out


class Orange:
    connector, kind, environment = "orange-dev", "orange_money", "sandbox"
    refunds = "none"
    faults = (*FAULTS, "rate_limit", "error_503")
    CLIENT = ("orange-client", "orange-secret", "a1b2c3d4")

    def __init__(self, public_url: str) -> None:
        client_id, client_secret, merchant_key = self.CLIENT
        self.fake = OrangeMoneyFake(
            client_id=client_id, client_secret=client_secret, merchant_key=merchant_key
        )
        self.routes: tuple[Route, ...] = (Route("orange_ci", ("collect",), "2250712345678", None),)

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def settings(self) -> dict[str, str]:
        return {"country": "dev", "return_url": "https://shop.example/merci"}

    def secrets(self) -> dict[str, str]:
        client_id, client_secret, merchant_key = self.CLIENT
        return {
            "client_id": client_id,
            "client_secret": client_secret,
            "merchant_key": merchant_key,
        }

    def customer_acts(self, reference: str, pays: bool) -> bool:
        """On Orange's page: number and OTP, « Confirmer » (Orange declines some)."""
        payment = self.fake.orders.get(reference.replace("-", "")[:30])
        if payment is None:
            return False
        with contextlib.suppress(ValueError, KeyError):
            (self.fake.pay if pays else self.fake.fail)(payment.pay_token)
        return True

    def fault(self, kind: str) -> None:
        self.fake.fault(kind)

    def notices(self, mode: str) -> None:
        self.fake.notification_mode = mode

    def forge(self, callbacks: str, reference: str) -> None:
        body = {"status": "SUCCESS", "notif_token": uuid.uuid4().hex, "txnid": "MP" + reference[:8]}
        _forged(
            self.fake.send_forged_notification,
            _callback_url(callbacks, self.connector, reference),
            body,
        )

    def moved(self) -> list[Moved]:
        return [
            Moved(self.connector, "collect", (p.order_id,), Decimal(p.amount))
            for p in list(self.fake.orders.values())
            if p.status == "SUCCESS"
        ]


class CinetPay:
    connector, kind, environment = "cinetpay", "cinetpay", "production"
    refunds = "none"
    faults = (*FAULTS, "rate_limit")
    APIKEY, SITE_ID, SECRET_KEY, PASSWORD = "cp-apikey", "445160", "cp-secret-key", "cp-password"
    CARD_HOLDER: ClassVar = {
        "card_phone_number": "2250700000000",
        "card_address": "Boulevard Latrille",
        "card_city": "Abidjan",
        "card_country": "CI",
        "card_state": "Abidjan",
        "card_zip_code": "00225",
    }

    def __init__(self, public_url: str) -> None:
        self.fake = CinetPayFake(
            apikey=self.APIKEY,
            site_id=self.SITE_ID,
            secret_key=self.SECRET_KEY,
            transfer_password=self.PASSWORD,
            transfer_balance=1_000_000_000,
        )
        payee = "2250712345678"
        self.fake.outcome_for(_failing(payee), "REJ", "numéro invalide")
        self.routes: tuple[Route, ...] = (
            Route("moov_tg", ("collect",), "22899123456", None),
            Route("orange_ci", ("disburse",), payee, _failing(payee)),
        )

    @property
    def base_url(self) -> str:
        return self.fake.checkout_base_url

    def settings(self) -> dict[str, str]:
        return {
            "site_id": self.SITE_ID,
            "return_url": "https://shop.example/merci",
            "transfer_base_url": self.fake.transfer_base_url,
            **self.CARD_HOLDER,
        }

    def secrets(self) -> dict[str, str]:
        return {
            "apikey": self.APIKEY,
            "secret_key": self.SECRET_KEY,
            "transfer_password": self.PASSWORD,
        }

    def customer_acts(self, reference: str, pays: bool) -> bool:
        """On CinetPay's page, with Flooz Togo: « Payer », or a refusal (600)."""
        if reference not in self.fake.payments:
            return False
        with contextlib.suppress(ValueError):
            if pays:
                self.fake.pay(reference, method="FLOOZTG")
            else:
                self.fake.refuse(reference, code="600", method="FLOOZTG")
        return True

    def fault(self, kind: str) -> None:
        self.fake.fault(kind)

    def notices(self, mode: str) -> None:
        self.fake.notify_mode = mode

    def forge(self, callbacks: str, reference: str) -> None:
        fields = {"cpm_site_id": self.SITE_ID, "cpm_trans_id": reference, "cpm_amount": "1"}
        _forged(
            self.fake.send_forged_notification,
            _callback_url(callbacks, self.connector, reference),
            fields,
        )

    def moved(self) -> list[Moved]:
        collected = [
            Moved(self.connector, "collect", (p.transaction_id,), p.amount)
            for p in list(self.fake.payments.values())
            if p.status == "ACCEPTED"
        ]
        paid_out = [
            Moved(
                self.connector,
                "disburse",
                (t.client_transaction_id, t.transaction_id),
                Decimal(t.amount),
            )
            for t in list(self.fake.transfers.values())
            if t.treatment_status == "VAL"
        ]
        return collected + paid_out


@contextlib.contextmanager
def operators(public_url: str) -> Iterator[list[Rig]]:
    """The five fakes, serving, their notices aimed at Cauri's public URL."""
    rigs: list[Rig] = [
        Mtn(public_url),
        Pawapay(public_url),
        Wave(public_url),
        Orange(public_url),
        CinetPay(public_url),
    ]
    with ExitStack() as stack:
        for rig in rigs:
            fake = rig.fake  # type: ignore[attr-defined]
            # A request cut by a killed Cauri is the campaign's doing: no traceback for it.
            fake._server.handle_error = _cut_off
            stack.enter_context(fake)
        yield rigs


def _cut_off(request: object, client_address: object) -> None:
    return None


def pick_route(rigs: list[Rig], action: str, rng: random.Random) -> tuple[Rig, Route]:
    offered = [(rig, route) for rig in rigs for route in rig.routes if action in route.actions]
    return rng.choice(offered)
