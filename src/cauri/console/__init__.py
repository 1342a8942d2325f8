"""The staff console: the payment company's web back office at /console (issue 14).

Server-rendered French pages that work without JavaScript, behind a sign-in with Argon2
passwords, TOTP for the roles that move money, database sessions and CSRF tokens. Every page
declares the permission it needs (`cauri.console.pages.Pages`); one renderer, one layout,
one stylesheet. Outside the API: no merchant key, no JSON envelope, not in the OpenAPI
document.
"""
