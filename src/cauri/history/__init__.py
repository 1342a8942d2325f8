"""The history tables over the years: their monthly partitions (migration 0041)."""
