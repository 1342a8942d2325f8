"""An operator operation and its exchanges as the CLI prints them, for `cauri exchanges` and
`cauri payments show` alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from cauri.cli.output import echo_json

if TYPE_CHECKING:
    from cauri.connectors.history import OperationView


def operation_row(view: OperationView) -> dict[str, Any]:
    op = view.operation
    return {
        "id": str(op.id),
        "subject": op.subject,
        "subject_ref": op.subject_ref,
        "action": op.action,
        "operator": op.operator,
        "connector": op.connector,
        "livemode": op.livemode,
        "status": op.status,
        "operator_reference": op.operator_reference,
        "reason": op.reason,
        "polls": op.polls,
        "review_required_at": op.review_required_at and op.review_required_at.isoformat(),
        "created_at": op.created_at.isoformat(),
        "settled_at": op.settled_at and op.settled_at.isoformat(),
        "exchanges": [
            {
                "action": ex.action,
                "method": ex.method,
                "url": ex.url,
                "request_body": ex.request_body,
                "response_status": ex.response_status,
                "response_body": ex.response_body,
                "duration_ms": ex.duration_ms,
                "error": ex.error,
                "created_at": ex.created_at.isoformat(),
            }
            for ex in view.exchanges
        ],
    }


def echo_operations(
    rows: list[dict[str, Any]], as_json: bool, none: str, *, bodies: bool = True
) -> None:
    """In text, a line per operation and per exchange; `bodies`: what each exchange sent and
    received too."""
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo(none)
    for row in rows:
        typer.echo(
            f"{row['created_at']}  {row['action']} {row['operator']} via {row['connector']}: "
            f"{row['status']}" + (f" ({row['reason']})" if row["reason"] else "")
        )
        for ex in row["exchanges"]:
            answer = ex["response_status"] if ex["response_status"] is not None else "no answer"
            typer.echo(
                f"  {ex['created_at']}  {ex['action']}: {ex['method']} {ex['url']} -> {answer} "
                f"in {ex['duration_ms']} ms" + (f" [{ex['error']}]" if ex["error"] else "")
            )
            if not bodies:
                continue
            if ex["request_body"]:
                typer.echo(f"    sent: {ex['request_body']}")
            if ex["response_body"]:
                typer.echo(f"    received: {ex['response_body']}")
