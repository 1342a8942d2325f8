-- One payment's ledger transaction and its three postings, as `ledger.service.appended`
-- writes them (bench/zero_sum.sh: the zero-sum trigger's cost in PostgreSQL alone). The
-- account codes have no colon: pgbench would read `:name` as one of its variables.
WITH tx AS (
  INSERT INTO ledger_transactions (kind, reference, livemode, created_at)
  VALUES ('payment', 'bench', false, now()) RETURNING id, created_at
)
INSERT INTO ledger_postings (transaction_id, created_at, account, currency, amount, folded)
SELECT tx.id, tx.created_at, p.account, 'XOF', p.amount, false FROM tx, (VALUES
  ('bench-clearing', -1015), ('bench-merchant', 1000), ('bench-fees', 15)) AS p(account, amount);
