"""The installed `cauri` command, as the staff run it: connectors, routes, exchanges. No
secret ever appears in what it prints."""

from __future__ import annotations

import uuid
from pathlib import Path

from cauri.kit.db import unit_of_work
from cauri.models import OperatorExchange, OperatorOperation
from cauri.runtime import Runtime
from tests.connectors.builders import SECRET, cauri

MTN_SECRETS = ("api_user", "api_key", "collection_subscription_key")


def secret_files(tmp_path: Path) -> list[str]:
    args = []
    for name in MTN_SECRETS:
        path = tmp_path / name
        path.write_text(f"{SECRET}-{name}\n")
        args += ["--secret", f"{name}=@{path}"]
    return [*args, "--secret", "disbursement_subscription_key=@-"]


async def test_connectors_and_routes(database_url: str, tmp_path: Path) -> None:
    outputs: list[str] = []
    refused = await cauri(
        database_url,
        "connectors", "add", "mtn-bj", "--kind", "mtn_momo", "--environment", "sandbox",
        "--base-url", "http://127.0.0.1:9", "--setting", "target_environment=sandbox",
        "--secret", f"api_key={SECRET}",
    )  # fmt: skip
    assert refused.exit_code == 2 and "shell history" in refused.stderr
    outputs += [refused.stdout, refused.stderr]

    added = await cauri(
        database_url,
        "connectors", "add", "mtn-bj", "--kind", "mtn_momo", "--environment", "sandbox",
        "--base-url", "http://127.0.0.1:9", "--setting", "target_environment=sandbox",
        *secret_files(tmp_path), "--json",
        stdin=f"{SECRET}-disbursement\n".encode(),
    )  # fmt: skip
    outputs += [added.stdout, added.stderr]
    assert added.json()["replaced"] is False
    assert added.json()["secret_names"] == [
        "api_key",
        "api_user",
        "collection_subscription_key",
        "disbursement_subscription_key",
    ]

    routed = await cauri(database_url, "routes", "set", "MTN", "--collect", "mtn-bj", "--json")
    assert routed.json() == {
        "operator": "mtn",
        "collect": "mtn-bj",
        "disburse": None,
        "refund": None,
    }

    listed = await cauri(
        database_url, "connectors", "list", "--json", public_url="https://pay.example.com/"
    )
    outputs += [listed.stdout, listed.stderr]
    [row] = listed.rows()
    assert set(row) == {
        "name", "kind", "environment", "base_url", "settings", "secret_names", "routes",
        "callback_url", "last_check", "created_at", "updated_at",
    }  # fmt: skip
    assert row["last_check"] is None
    assert row["callback_url"] == "https://pay.example.com/api/v1/operator-callbacks/mtn-bj"
    assert row["settings"] == {"target_environment": "sandbox"}
    assert row["routes"] == [{"operator": "mtn", "action": "collect"}]

    routes = await cauri(database_url, "routes", "list", "--json")
    assert routes.rows() == [
        {"operator": "mtn", "collect": "mtn-bj", "disburse": None, "refund": None}
    ]

    # Nothing answers at that base URL (and the kind may not be built on this branch): the
    # check fails in plain words, never with a traceback.
    checked = await cauri(database_url, "connectors", "check", "mtn-bj")
    outputs += [checked.stdout, checked.stderr]
    assert checked.exit_code == 1
    assert checked.stdout.startswith("mtn-bj: NOT OK: ")
    assert "Traceback" not in checked.stderr
    # The verdict stays on the account, for `connectors list`.
    listed = await cauri(database_url, "connectors", "list")
    outputs += [listed.stdout, listed.stderr]
    assert "last check: NOT OK at " in listed.stdout

    assert not [output for output in outputs if SECRET in output]


async def test_exchanges_list(runtime: Runtime, database_url: str) -> None:
    now = runtime.clock.now()
    operation_id = uuid.uuid4()
    async with unit_of_work(runtime.sessionmaker) as session:
        session.add(
            OperatorOperation(
                id=operation_id,
                livemode=True,
                connector="mtn-bj",
                operator="mtn",
                action="collect",
                subject="payment",
                subject_ref="3f1c2b7e-0000-4000-8000-000000000001",
                request={"amount": 1020},
                status="succeeded",
                created_at=now,
                updated_at=now,
            )
        )
        await session.flush()
        for action, status in (("requesttopay", 202), ("requesttopay_status", 200)):
            session.add(
                OperatorExchange(
                    operation_id=operation_id,
                    connector="mtn-bj",
                    action=action,
                    method="POST" if status == 202 else "GET",
                    url=f"https://sandbox.momodeveloper.mtn.com/{action}",
                    request_body='{"amount": "1020"}' if status == 202 else None,
                    response_status=status,
                    response_body=None if status == 202 else '{"status": "SUCCESSFUL"}',
                    duration_ms=120,
                    created_at=now,
                )
            )
    listed = await cauri(
        database_url, "exchanges", "list", "3f1c2b7e-0000-4000-8000-000000000001", "--json"
    )
    [operation] = listed.rows()
    assert operation["id"] == str(operation_id) and operation["status"] == "succeeded"
    assert [e["action"] for e in operation["exchanges"]] == ["requesttopay", "requesttopay_status"]
    assert set(operation["exchanges"][0]) == {
        "action", "method", "url", "request_body", "response_status", "response_body",
        "duration_ms", "error", "created_at",
    }  # fmt: skip
    assert operation["exchanges"][1]["response_body"] == '{"status": "SUCCESSFUL"}'
    resent = await cauri(
        database_url, "exchanges", "resend", "3f1c2b7e-0000-4000-8000-000000000001"
    )
    assert resent.stdout.strip() == (
        f"{operation_id} (mtn-bj, collect): already succeeded: nothing to ask"
    )
    nothing = await cauri(database_url, "exchanges", "resend", "pyo_nothing")
    assert nothing.stdout.strip() == "no operator operation for pyo_nothing"
