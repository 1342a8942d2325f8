"""Cauri's own statement CSV (format `cauri`, docs/OPERATORS.md "Statements"): what it reads,
what it refuses (the line and the column named, in French), and amounts in major units read
back exactly in minor units whatever the currency's decimals."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cauri.kit.errors import InvalidRequest
from cauri.kit.money import decimal_text
from cauri.reconciliation import formats
from cauri.reconciliation.formats import cauri
from cauri.reconciliation.lines import Line, LineKind, LineStatus, Reading

HEADER = "operator_id,reference,kind,status,amount,fee,currency,phone_number,at"
AT = "2026-11-27T10:05:00+01:00"


def read(text: str) -> tuple[list[Line], Reading]:
    reading = cauri.read(io.StringIO(text))
    return list(reading.lines), reading


def refusal(text: str) -> str:
    with pytest.raises(InvalidRequest) as refused:
        read(text)
    return refused.value.message


def test_a_statement_is_read_by_its_column_names_with_its_balances() -> None:
    lines, reading = read(
        "at;currency;amount;kind;status;operator_id;Libellé;phone_number;fee;reference\n"
        "2026-11-27T09:05:00Z;xof;-5000;disburse;succeeded;MP-1;Retrait;+229 97 12 34 56;50;"
        "5f0c…\n"
        ";XOF;120000;opening_balance;;;;;;\n"
        f"{AT};EUR;12.50;collect;failed;MP-2;;;;\n"
        ";XOF;114950;closing_balance;;;;;;\n"
    )
    assert lines == [
        Line("MP-1", "5f0c…", LineKind.DISBURSE, LineStatus.SUCCEEDED, -5000, 50, "XOF",
             "22997123456", datetime(2026, 11, 27, 9, 5, tzinfo=UTC)),
        Line("MP-2", None, LineKind.COLLECT, LineStatus.FAILED, 1250, 0, "EUR", None,
             datetime(2026, 11, 27, 9, 5, tzinfo=UTC)),
    ]  # fmt: skip
    assert (reading.opening_balances, reading.closing_balances) == (
        {"XOF": 120000},
        {"XOF": 114950},
    )


@pytest.mark.parametrize(
    ("row", "where", "why"),
    [
        ("MP-1,,collect,succeeded,1 000,,XOF,,AT", "colonne amount", "montant illisible"),
        ("MP-1,,collect,succeeded,10.5,,XOF,,AT", "colonne amount", "impossible en XOF"),
        ("MP-1,,disburse,succeeded,1000,,XOF,,AT", "colonne amount", "négatif attendu (-1000)"),
        ("MP-1,,payout,succeeded,-1000,,XOF,,AT", "colonne kind", "'payout' inconnu"),
        ("MP-1,,collect,done,1000,,XOF,,AT", "colonne status", "'done' inconnu"),
        ("MP-1,,collect,succeeded,1000,-5,XOF,,AT", "colonne fee", "frais négatifs"),
        ("MP-1,,collect,succeeded,1000,,FCFA,,AT", "colonne currency", "devise inconnue"),
        ("MP-1,,collect,succeeded,1000,,XOF,229-97,AT", "colonne phone_number", "illisible"),
        ("MP-1,,collect,succeeded,1000,,XOF,,2026-11-27 10:05", "colonne at", "sans décalage"),
        (",,collect,succeeded,1000,,XOF,,AT", "colonne operator_id", "valeur absente"),
        (",,closing_balance,,1000,,XOF,,\n,,closing_balance,,9,,XOF,,", "colonne kind",
         "un deuxième closing_balance en XOF"),
    ],
)  # fmt: skip
def test_a_bad_row_is_refused_with_its_line_and_column(row: str, where: str, why: str) -> None:
    message = refusal(f"{HEADER}\nMP-0,,topup,succeeded,5,,XOF,,{AT}\n{row.replace('AT', AT)}\n")
    line = 4 if "\n" in row else 3
    assert message.startswith(f"Relevé illisible, ligne {line}, {where} : ")
    assert why in message


def test_a_file_without_the_columns_is_refused_naming_them() -> None:
    assert refusal("Date,Référence,Montant\n2026-11-27,abc,100\n") == (
        "Relevé illisible, ligne 1 : colonnes absentes : operator_id, kind, status, amount, "
        "currency, at."
    )


def test_cauris_csv_is_the_default_where_the_operator_publishes_no_format() -> None:
    assert [formats.default_for(kind) for kind in ("mtn_momo", "orange_money", "cinetpay")] == [
        "cauri"
    ] * 3
    assert (formats.default_for("pawapay"), formats.default_for("wave")) == ("pawapay", "wave")


@given(
    minor=st.integers(min_value=-(10**13), max_value=10**13),
    fee=st.integers(min_value=0, max_value=10**9),
    currency=st.sampled_from(["XOF", "EUR"]),  # no decimals, and two
)
def test_amounts_in_major_units_come_back_exactly_in_minor_units(
    minor: int, fee: int, currency: str
) -> None:
    row = f"MP-1,,other,succeeded,{decimal_text(minor, currency)},{decimal_text(fee, currency)}"
    [line], _ = read(f"{HEADER}\n{row},{currency},,{AT}\n")
    assert (line.amount, line.fee) == (minor, fee)
