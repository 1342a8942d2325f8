"""Issue 14: staff passwords (Argon2id, rehashed when the parameters change) and TOTP codes
(±1 step, never the same step twice, the secret encrypted at rest)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pyotp
import pytest
from argon2 import PasswordHasher

from cauri.kit.errors import InvalidRequest, ServerError
from cauri.people import passwords, totp
from tests.conftest import TEST_SECRET_KEY

NOW = datetime(2026, 11, 25, 12, 0, 10, tzinfo=UTC)


def _code(secret: str, steps: int = 0) -> str:
    """The code of the step `steps` after NOW's, as an authenticator application shows it."""
    return pyotp.TOTP(secret).at(NOW + timedelta(seconds=30 * steps))


async def test_password_is_hashed_with_argon2id_and_verified() -> None:
    stored = await passwords.hash_password("un mot de passe assez long")
    assert stored.startswith("$argon2id$")
    assert "un mot de passe" not in stored
    assert (await passwords.verify(stored, "un mot de passe assez long")).valid
    assert not (await passwords.verify(stored, "un mot de passe assez lonG")).valid
    assert not (await passwords.verify(None, "un mot de passe assez long")).valid
    assert not (await passwords.verify("not a hash", "un mot de passe assez long")).valid


async def test_a_hash_made_with_weaker_parameters_is_rehashed_on_success() -> None:
    weak = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash("mot de passe 2026")
    verdict = await passwords.verify(weak, "mot de passe 2026")
    assert verdict.valid and verdict.rehashed is not None
    assert verdict.rehashed != weak and verdict.rehashed.startswith("$argon2id$")
    assert (await passwords.verify(verdict.rehashed, "mot de passe 2026")).rehashed is None
    assert (await passwords.verify(weak, "autre chose")).rehashed is None


def test_new_password_rules() -> None:
    passwords.check_new("douze carac.")
    with pytest.raises(InvalidRequest) as short:
        passwords.check_new("onze carac.")
    assert short.value.details == {"password": [short.value.message]}
    with pytest.raises(InvalidRequest) as different:
        passwords.check_new("douze carac.", "douze carac!")
    assert list(different.value.details or {}) == ["confirmation"]


def test_codes_of_the_step_before_and_after_are_accepted() -> None:
    secret = totp.new_secret()
    step = totp.step_of(NOW)
    for offset in (-1, 0, 1):
        assert totp.accepted_step(secret, _code(secret, offset), NOW, None) == step + offset
    for offset in (-2, 2):
        assert totp.accepted_step(secret, _code(secret, offset), NOW, None) is None


def test_a_code_is_never_accepted_twice() -> None:
    secret = totp.new_secret()
    code = _code(secret)
    used = totp.accepted_step(secret, code, NOW, None)
    assert used is not None
    assert totp.accepted_step(secret, code, NOW, used) is None
    # Nor an older one still within the tolerance, once a later one was taken.
    assert totp.accepted_step(secret, _code(secret, -1), NOW, used) is None
    # The next step's code is new.
    assert totp.accepted_step(secret, _code(secret, 1), NOW, used) == used + 1


def test_codes_that_are_no_six_digits_are_refused() -> None:
    secret = totp.new_secret()
    code = _code(secret)
    assert totp.accepted_step(secret, f"{code[:3]} {code[3:]}", NOW, None) is not None
    for wrong in ("", "abcdef", "١٢٣٤٥٦", code + "0", "\x00" * 6):
        assert totp.accepted_step(secret, wrong, NOW, None) is None


def test_secret_is_sealed_per_account_and_shown_grouped() -> None:
    secret = totp.new_secret()
    account, other = uuid.uuid4(), uuid.uuid4()
    blob = totp.seal(TEST_SECRET_KEY, account, secret)
    assert secret.encode() not in blob
    assert totp.unseal(TEST_SECRET_KEY, account, blob) == secret
    with pytest.raises(ServerError, match="cauri staff link"):
        totp.unseal(TEST_SECRET_KEY, other, blob)
    with pytest.raises(ServerError, match="CAURI_SECRET_KEY"):
        totp.seal(None, account, secret)
    shown = totp.enrollment(secret, "awa@cauri.example")
    assert shown.grouped.replace(" ", "") == secret and len(shown.grouped.split()[0]) == 4
    assert shown.uri.startswith("otpauth://totp/Cauri:awa%40cauri.example?secret=")
    assert "issuer=Cauri" in shown.uri
