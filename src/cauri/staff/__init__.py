"""The platform's staff: their accounts, sign-in, sessions and roles (accounts, sign_in,
sessions, throttle, roles), and what they read and do across merchants, used alike by the
operator CLI and the staff console. Never reached with a merchant's key, so never scoped to
one merchant's environment: both environments of every merchant."""
