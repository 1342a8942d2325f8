"""A merchant's team: the roles of its members and what each may do on the dashboard."""
