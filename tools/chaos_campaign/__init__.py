"""The chaos campaign on the live path (issue 23): live payments, payouts, refunds and plan
refunds through the five operators' contract fakes at once, while the fakes inject the faults
they reproduce and the campaign kills `cauri serve` and `cauri worker` with SIGKILL; then,
once every operation has converged, the money invariants are checked from both sides: Cauri's
ledger and what each operator says it moved. `tools/chaos` runs it; docs/RELIABILITY.md says
what it proves and records a long run."""
