"""Contract fakes of the operators' networks (each from its operator's documentation)."""

# How long a fake waits for Cauri to answer a callback it sends: generous, stated once (a
# loaded two-core CI machine once took more than 10 s to answer one).
CALLBACK_TIMEOUT = 60.0
