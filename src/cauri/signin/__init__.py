"""The front doors of the pages people sign in to: the staff console and the merchants'
dashboard. Each is a `Door` (its realm, its address, its cookies); the sign-in pages, the
session and CSRF checks and the way a page's refusals become pages are written once here
and serve both, over cauri.people's mechanics."""
