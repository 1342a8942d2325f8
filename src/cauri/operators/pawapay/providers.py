"""Which pawaPay provider carries each operator of Cauri's catalogue (pawaPay's provider
list and sandbox test numbers: sources in docs/OPERATORS.md, "pawaPay"). A connector account
may name others with its `providers` setting (`moov_tg=MOOV_TGO,…`) as pawaPay adds them."""

from __future__ import annotations

from collections.abc import Mapping

PROVIDERS: Mapping[str, str] = {
    "mtn": "MTN_MOMO_BEN",
    "moov": "MOOV_BEN",
    "moov_bf": "MOOV_BFA",
    "orange_bf": "ORANGE_BFA",
    "mtn_ci": "MTN_MOMO_CIV",
    "orange_ci": "ORANGE_CIV",
    "wave_ci": "WAVE_CIV",
    "orange_sn": "ORANGE_SEN",
    "free_sn": "FREE_SEN",
    "wave_sn": "WAVE_SEN",
    "mtn_cg": "MTN_MOMO_COG",
}


# How a provider authorises a deposit when the account's active configuration cannot be read:
# PREAUTH takes a code the customer generated beforehand (`preAuthorisationCode`).
PREAUTH = frozenset({"ORANGE_BFA"})


def table(setting: str | None) -> dict[str, str]:
    """The default table with the account's own entries over it; ValueError, in plain
    words, for a setting that cannot be read."""
    providers = dict(PROVIDERS)
    for pair in (setting or "").split(","):
        if not pair.strip():
            continue
        operator, _, provider = pair.partition("=")
        if not operator.strip() or not provider.strip():
            raise ValueError(
                f"Réglage providers illisible : « {pair} » (attendu : operateur=PROVIDER,…)."
            )
        providers[operator.strip().lower()] = provider.strip().upper()
    return providers
