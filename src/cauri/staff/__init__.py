"""The platform's staff: their roles, and what they read and do across merchants, used alike
by the operator CLI and the staff console (their accounts, sign-in and sessions are
cauri.people's, realm STAFF). Never reached with a merchant's key, so never scoped to one
merchant's environment: both environments of every merchant."""
