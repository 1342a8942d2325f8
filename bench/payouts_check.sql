-- After bench/payouts.sh: the merchant's balance was never overdrawn and no payout was paid
-- twice. psql variables: merchant (its id), credited (what was credited, minor units). One
-- line per check: name|found|expected|ok (t or f).
\set account '\'merchant:' :merchant ':available:test:XOF\''
WITH postings AS (
  SELECT p.amount, t.kind, t.reference, sum(p.amount) OVER (ORDER BY p.id) AS running
  FROM ledger_postings p JOIN ledger_transactions t ON t.id = p.transaction_id
  WHERE p.account = :account
),
head AS (SELECT balance FROM ledger_accounts WHERE code = :account),
unfolded AS (SELECT coalesce(sum(amount), 0) AS amount FROM ledger_postings
  WHERE account = :account AND NOT folded),
mine AS (SELECT * FROM payouts WHERE merchant_id = :'merchant'),
paid AS (SELECT reference, count(*) AS times FROM ledger_transactions
  WHERE kind = 'payout' AND reference IN (SELECT reference FROM mine) GROUP BY reference),
checks(name, found, expected) AS (VALUES
  ('final balance (sum of postings) >= 0',
    (SELECT coalesce(sum(amount), 0) FROM postings) >= 0, true),
  ('lowest running balance (postings in id order, which is lock order) >= 0',
    (SELECT coalesce(min(running), 0) FROM postings) >= 0, true),
  ('account head + unfolded credits = sum of postings',
    (SELECT balance FROM head) + (SELECT amount FROM unfolded)
      = (SELECT sum(amount) FROM postings), true),
  ('credited - final balance = sum of payouts debited (amount + fee)',
    :credited - (SELECT sum(amount) FROM postings)
      = (SELECT coalesce(sum(amount + fee_amount), 0) FROM mine WHERE debited), true),
  ('each posting on the balance = -(amount + fee) of its payout',
    (SELECT count(*) FROM postings p JOIN mine ON mine.reference = p.reference
      WHERE p.kind = 'payout' AND p.amount <> -(mine.amount + mine.fee_amount)) = 0, true),
  ('payouts paid twice (more than one payout ledger transaction)',
    (SELECT count(*) FROM paid WHERE times > 1) = 0, true),
  ('payout ledger transactions = payouts debited = payouts succeeded',
    (SELECT count(*) FROM paid) = (SELECT count(*) FROM mine WHERE debited)
      AND (SELECT count(*) FROM mine WHERE debited)
        = (SELECT count(*) FROM mine WHERE status = 'succeeded'), true),
  ('payouts pending or failed (every one was paid at once, or not recorded)',
    (SELECT count(*) FROM mine WHERE status <> 'succeeded') = 0, true),
  ('reversals (a payout paid at once has none; a refusal writes no debit)',
    (SELECT count(*) FROM postings WHERE kind = 'payout_reversal') = 0, true)
)
SELECT name, found, expected, found = expected FROM checks;
SELECT 'payouts succeeded|' || count(*) FILTER (WHERE status = 'succeeded')
  || '|final balance|' || (SELECT balance FROM ledger_accounts WHERE code = :account)
  + (SELECT coalesce(sum(amount), 0) FROM ledger_postings WHERE account = :account AND NOT folded)
  FROM payouts WHERE merchant_id = :'merchant';
