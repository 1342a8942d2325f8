"""`/api/v1/docs`: Swagger UI with its script, style sheet and icon served from the package
that ships them (fastapi-offline), never from a CDN."""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = Path(fastapi_offline.__file__).parent / "static"

# Swagger UI's options: no call to the public validator (validator.swagger.io), the key
# typed in kept across reloads, requests timed.
_OPTIONS = {"validatorUrl": None, "persistAuthorization": True, "displayRequestDuration": True}


def install(parent: APIRouter, docs_url: str, openapi_url: str) -> None:
    assets_url = f"{docs_url}/assets"
    parent.mount(assets_url, StaticFiles(directory=ASSETS), name="docs-assets")

    @parent.get(docs_url, include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{request.app.title} — API",
            swagger_js_url=f"{root}{assets_url}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{assets_url}/swagger-ui.css",
            swagger_favicon_url=f"{root}{assets_url}/favicon.png",
            swagger_ui_parameters=_OPTIONS,
        )
