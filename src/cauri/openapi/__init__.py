"""The merchants' API described: its OpenAPI document and the docs page that shows it, with
the page's assets served by Cauri itself (no CDN: the docs work with no internet)."""
