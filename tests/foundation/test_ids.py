"""kit.ids: the identifiers shown to merchants are drawn uniformly from their alphabet."""

from __future__ import annotations

import string
from collections import Counter

from cauri.kit import ids


def test_a_payment_identifier_is_the_prefix_and_twelve_letters_or_digits() -> None:
    identifier = ids.short_identifier()
    assert identifier.startswith("CAU")
    assert len(identifier) == 15
    assert set(identifier[3:]) <= set(string.ascii_uppercase + string.digits)


def test_every_character_is_as_likely_as_another() -> None:
    # A million characters of 36: each is expected 27,778 times, give or take 167 (one
    # standard deviation). Taking every byte modulo 36 would make 4 of them 12.5 % likelier
    # (8 bytes of 256 each, not 7): 21 deviations off, where 5 % is 8.
    alphabet = string.ascii_uppercase + string.digits
    counts = Counter("".join(ids.random_text(alphabet, 1000) for _ in range(1000)))
    expected = 1_000_000 / len(alphabet)
    assert set(counts) == set(alphabet)
    assert all(abs(n - expected) < 0.05 * expected for n in counts.values()), counts
