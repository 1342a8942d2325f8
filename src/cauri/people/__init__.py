"""People who sign in, staff and merchants' team members alike: accounts and their one-time
links, passwords, TOTP, sessions and the sign-in throttle. One implementation serves both
realms (cauri.people.realm); the console and the dashboard are its two front doors."""
