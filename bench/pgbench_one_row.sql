-- pgbench script (bench/payouts.sh): PostgreSQL alone debiting one balance, one row per
-- transaction, refused below zero like a payout (the row is `bench_one_row`, id 1).
UPDATE bench_one_row SET balance = balance - 1 WHERE id = 1 AND balance >= 1;
