"""Live money's connectors: accounts at upstream operator APIs and the routes that pick them,
configured by the platform's staff (`cauri connectors …`, `cauri routes …`)."""
