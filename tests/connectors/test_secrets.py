"""Connector credentials at rest: authenticated encryption under CAURI_SECRET_KEY."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from cauri.config import Settings
from cauri.connectors.errors import ConnectorError
from cauri.connectors.secrets import SecretBox

KEY = "k" * 32
BOX = SecretBox(KEY)


@settings(max_examples=60, deadline=None)
@given(
    account=st.text(min_size=1, max_size=40),
    secrets=st.dictionaries(st.text(max_size=30), st.text(max_size=200), max_size=6),
)
def test_round_trip(account: str, secrets: dict[str, str]) -> None:
    blob = BOX.encrypt(account, secrets)
    assert BOX.decrypt(account, blob) == secrets
    for value in secrets.values():
        if len(value) >= 4:
            assert value.encode() not in blob


def test_each_encryption_is_fresh() -> None:
    assert BOX.encrypt("a", {"token": "t"}) != BOX.encrypt("a", {"token": "t"})


def test_a_changed_blob_is_refused_never_garbage() -> None:
    blob = bytearray(BOX.encrypt("mtn-bj", {"api_key": "secret-value"}))
    for position in (1, 14, len(blob) - 1):
        tampered = bytearray(blob)
        tampered[position] ^= 0x01
        with pytest.raises(ConnectorError, match="CAURI_SECRET_KEY"):
            BOX.decrypt("mtn-bj", bytes(tampered))
    with pytest.raises(ConnectorError):
        BOX.decrypt("mtn-bj", bytes(blob[:10]))


def test_a_blob_moved_to_another_account_is_refused() -> None:
    blob = BOX.encrypt("mtn-bj", {"api_key": "secret-value"})
    with pytest.raises(ConnectorError):
        BOX.decrypt("mtn-ci", blob)


def test_a_rotated_key_is_a_clear_error() -> None:
    blob = BOX.encrypt("mtn-bj", {"api_key": "secret-value"})
    with pytest.raises(ConnectorError, match="CAURI_SECRET_KEY") as raised:
        SecretBox("z" * 32).decrypt("mtn-bj", blob)
    assert "secret-value" not in raised.value.message


def test_without_a_key_the_error_names_the_setting() -> None:
    with pytest.raises(ConnectorError, match="CAURI_SECRET_KEY"):
        SecretBox(None)


def test_the_key_has_32_characters_or_more() -> None:
    with pytest.raises(ValidationError, match="CAURI_SECRET_KEY must be at least 32"):
        Settings(secret_key="x" * 31)
    assert Settings(secret_key="x" * 32).secret_key == "x" * 32
    assert "x" * 32 not in repr(Settings(secret_key="x" * 32))
    with pytest.raises(ConnectorError):
        SecretBox("x" * 31)
