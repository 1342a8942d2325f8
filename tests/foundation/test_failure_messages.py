"""`failure_code` and `failure_message` (cauri.kit.failures): one table of French sentences;
every reason the service itself records has its own; an unknown code a generic one."""

from __future__ import annotations

import pytest

from cauri.kit.failures import GENERIC, MESSAGES, failure_fields
from cauri.operators.cinetpay.connector import NO_REFUNDS
from cauri.operators.cinetpay.connector import NOT_OFFERED as CINETPAY_NOT_OFFERED
from cauri.operators.orange_money.connector import NOT_OFFERED as ORANGE_NOT_OFFERED
from cauri.payments.service import CARD_EXPIRED_REASON
from cauri.plans.settlement import EXPIRED_REASON
from cauri.web.endpoints import PLAN_CLOSED_REASON

# What the service writes as a failure reason itself (the rest are operators' codes).
OWN_REASONS = [
    "operator_unavailable",
    "approval_rejected",
    "test_helper",
    "refused_at_initiation",
    "refused_after_initiation",
    "operator_refused_credentials",
    "operator_not_carried",
    "orange_url_refused",
    "cinetpay_amount_not_multiple_of_5",
    CARD_EXPIRED_REASON,
    EXPIRED_REASON,
    PLAN_CLOSED_REASON,
    CINETPAY_NOT_OFFERED,
    ORANGE_NOT_OFFERED,
    NO_REFUNDS,
]


@pytest.mark.parametrize("reason", OWN_REASONS)
def test_every_reason_of_the_service_has_its_sentence(reason: str) -> None:
    assert MESSAGES[reason] != GENERIC
    assert failure_fields("failed", reason) == {
        "failure_code": reason,
        "failure_message": MESSAGES[reason],
    }


def test_the_messages_are_sentences() -> None:
    for code, message in MESSAGES.items():
        assert code == code.lower() and " " not in code
        assert message[0].isupper() and message.endswith("."), message


def test_a_detail_after_a_colon_stays_out_of_the_code() -> None:
    fields = failure_fields("failed", "operator_refused_credentials:http_403")
    assert fields == {
        "failure_code": "operator_refused_credentials",
        "failure_message": MESSAGES["operator_refused_credentials"],
    }


def test_an_unknown_code_gets_the_generic_sentence() -> None:
    assert failure_fields("failed", "cinetpay_624") == {
        "failure_code": "cinetpay_624",
        "failure_message": GENERIC,
    }
    assert failure_fields("failed", None) == {"failure_code": None, "failure_message": GENERIC}


@pytest.mark.parametrize("status", ["pending", "succeeded", "refunded"])
def test_nothing_unless_failed(status: str) -> None:
    expected = {"failure_code": None, "failure_message": None}
    assert failure_fields(status, "refused_at_initiation") == expected
