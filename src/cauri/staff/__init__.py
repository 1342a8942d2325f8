"""What the platform's staff read across merchants (the operator CLI's `list` and `show`
commands, and the staff console after it). Never reached with a merchant's key, so never
scoped to one merchant's environment: both environments of every merchant."""
