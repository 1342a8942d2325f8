"""The failover campaign (issue 29): a PostgreSQL primary and its synchronous standby, Cauri on
the URL naming both, under payments and payouts retried with their external_id; the primary
killed with SIGKILL, fenced, the standby promoted; then nothing acknowledged may be lost or
made twice, the ledger must check, every event be delivered and the queue drain.
`tools/failover` runs it; docs/RELIABILITY.md says what it proves, docs/SCALING.md records a
long run."""
