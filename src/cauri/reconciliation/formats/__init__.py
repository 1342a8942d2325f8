"""Statement formats: a reader of each operator's own file (or of what its statement API
returns), and Cauri's own CSV for the operators that publish none, each giving Cauri's lines
(cauri.reconciliation.lines). Each is documented in docs/OPERATORS.md, "Statements"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from cauri.reconciliation.formats import cauri, pawapay, wave
from cauri.reconciliation.lines import Reading

Reader = Callable[[TextIO], Reading]

# A format of an operator's own is named after the connector kind that speaks to it.
BY_NAME: Mapping[str, Reader] = {"cauri": cauri.read, "pawapay": pawapay.read, "wave": wave.read}
GENERIC = "cauri"


def default_for(kind: str) -> str:
    """The format a connector kind's statements are read in when none is named: its
    operator's own, else Cauri's (MTN MoMo, Orange Money, CinetPay publish none)."""
    return kind if kind in BY_NAME else GENERIC
