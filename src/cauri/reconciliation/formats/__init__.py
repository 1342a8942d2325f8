"""Each operator's statement format, by connector kind: a reader of the operator's own file
(or of what its statement API returns), giving Cauri's lines (cauri.reconciliation.lines).
Each is documented from the operator's documentation in docs/OPERATORS.md, "Statements"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from cauri.reconciliation.formats import pawapay, wave
from cauri.reconciliation.lines import Reading

Reader = Callable[[TextIO], Reading]

FOR_KIND: Mapping[str, Reader] = {"pawapay": pawapay.read, "wave": wave.read}
