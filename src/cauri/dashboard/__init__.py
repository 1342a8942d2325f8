"""The merchants' dashboard at /dashboard: a merchant's team runs its own account (issue 26).
Server-rendered pages like the console's, behind a door of their own (cauri.signin): a
member's session never opens the console, nor a staff session the dashboard. Live data under
/dashboard/…, test data under /dashboard/test/…."""
