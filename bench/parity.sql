-- Every row one payment wrote, without what differs from one payment to the next (ids,
-- times, the merchant's id), one line each: bench/compare.sh diffs this for a payment made
-- through Cauri and one made through the floor, with the same key.
-- Usage: psql -v ref=<payment uuid> -f bench/parity.sql
\pset tuples_only on
\pset format unaligned
WITH p AS (SELECT * FROM payments WHERE id = :'ref'::uuid),
tx AS (SELECT t.* FROM ledger_transactions t, p WHERE t.reference = p.id::text),
ev AS (SELECT e.* FROM events e, p WHERE e.data ->> 'reference' = p.id::text),
d AS (SELECT w.* FROM webhook_deliveries w JOIN ev ON w.event_id = ev.id)
SELECT concat_ws(' | ', 'payment', p.status, p.amount, p.fee_amount, p.fee_bearer, p.currency,
  p.payment_mode_id, p.operator, p.phone_number, p.customer, p.metadata, p.external_id,
  p.description, p.callback_url, p.payment_url, p.plan_id, p.plan_fee_amount,
  p.amount_refunded, p.livemode, p.failure_reason, p.operator_reference,
  p.created_at = p.updated_at, length(p.identifier), left(p.identifier, 3))
FROM p
UNION ALL SELECT concat_ws(' | ', 'ledger transaction', tx.kind, tx.livemode,
  tx.created_at = p.created_at) FROM tx, p
UNION ALL SELECT concat_ws(' | ', 'ledger posting', replace(l.account, p.merchant_id, '<m>'),
  l.currency, l.amount, l.folded) FROM ledger_postings l JOIN tx ON l.transaction_id = tx.id, p
UNION ALL SELECT concat_ws(' | ', 'event', ev.type, ev.livemode, ev.callback_url,
  ev.data - 'reference' - 'identifier' - 'created_at' - 'updated_at',
  ev.data ->> 'reference' = p.id::text, ev.data ->> 'identifier' = p.identifier,
  ev.data ->> 'created_at' = ev.data ->> 'updated_at', ev.created_at = p.created_at)
  FROM ev, p
UNION ALL SELECT concat_ws(' | ', 'delivery', d.event, d.url, d.status, d.attempts,
  d.series_attempts, d.response_code, d.delivered_at, d.next_attempt_at = d.created_at) FROM d
UNION ALL SELECT concat_ws(' | ', 'job', j.kind, j.lane, replace(j.group_key, p.merchant_id, '<m>'),
  j.payload - 'delivery_id', j.status, j.max_attempts, j.attempts, j.run_at = p.created_at)
  FROM jobs j JOIN d ON j.payload ->> 'delivery_id' = d.id::text, p
ORDER BY 1;
