"""A batch's items read from a file, for those who send one rather than JSON over HTTP (the
staff's `cauri payouts batch FILE`, the merchants' dashboard): a CSV file whose header row
names `POST /payouts` fields, one payout a row, or a JSON file (the items, or the request's
whole body). Each item is then validated by the batch on its own (cauri.payout_batches.service);
only what makes the file unreadable refuses it whole.

A CSV as spreadsheets write it is read too: UTF-8 with or without its byte order mark, or
else Windows' Western encoding (cp1252: what Excel writes under Windows in French), and
semicolons between cells when the header has no comma (Excel's separator where the comma is
the decimal mark)."""

from __future__ import annotations

import csv
import hashlib
import io
from decimal import Decimal, InvalidOperation
from typing import Any

from cauri.kit import strict_json
from cauri.kit.errors import CauriError, InvalidRequest


def named_by_bytes(raw: bytes) -> str:
    """The batch's external_id when its sender names none: the same file sent twice is one
    batch."""
    return "file-" + hashlib.sha256(raw).hexdigest()[:32]


def text_of(raw: bytes) -> str:
    """The file's text; a file that is no text (a spreadsheet's own format, an image: NUL
    bytes, which no text file has) is refused."""
    if b"\x00" in raw:
        raise InvalidRequest(
            "Le fichier n'est pas un texte CSV : enregistrez le tableau au format CSV."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:
        raise InvalidRequest(
            "L'encodage du fichier n'est pas reconnu : enregistrez-le en CSV UTF-8."
        ) from None


def _cell(name: str, value: str) -> Any:
    """A CSV cell as the JSON body would carry it: the amount a number and the metadata an
    object when they read as such; anything else as written, for the item's validation to
    refuse with its message."""
    if name == "amount":
        try:
            return Decimal(value)
        except InvalidOperation:
            return value
    if name == "metadata":
        try:
            return strict_json.loads(value.encode())
        except CauriError:
            return value
    return value


def csv_items(text: str) -> list[Any]:
    """The items of a CSV's text, each row's non-empty cells by their column's name."""
    header = text.split("\n", 1)[0]
    delimiter = ";" if ";" in header and "," not in header else ","
    rows = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    items = []
    try:
        for line, row in enumerate(rows, start=2):
            if None in row:
                raise InvalidRequest(f"La ligne {line} a plus de cellules que l'en-tête.")
            items.append({name: _cell(name, value) for name, value in row.items() if value})
    except csv.Error:  # a cell over the reader's limit (128 KiB)
        raise InvalidRequest(
            f"Le fichier n'est pas un CSV lisible (ligne {rows.line_num})."
        ) from None
    return items


def read_batch(raw: bytes, name: str) -> tuple[str | None, list[Any]]:
    """A .json file's external_id (its body may name one) and items, or a CSV's items."""
    if not name.lower().endswith(".json"):
        return None, csv_items(text_of(raw))
    sent = strict_json.loads(raw)
    if isinstance(sent, list):
        return None, sent
    if isinstance(sent, dict) and isinstance(sent.get("items"), list):
        external_id = sent.get("external_id")
        return external_id if isinstance(external_id, str) else None, sent["items"]
    raise InvalidRequest(
        "Un fichier JSON contient la liste des transferts, ou {external_id, items}."
    )
