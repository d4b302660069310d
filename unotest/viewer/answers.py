"""How every route answers: JSON, ``{"error": "<one sentence>"}``, and the one table
from the product's exceptions to HTTP statuses.

Routes let ``runner`` exceptions rise; ``app.build_app`` installs ``error_handlers`` so
the same failure reads the same from every route.
"""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from runner.errors import ConfigError, UnotestError, UsageError
from runner.project.editing import FileExists, FileMissing, TooLarge
from runner.text import keep_lines

__all__ = ["error_handlers", "error_response", "json_body", "json_response"]

_STATUS_TEXT = {
    400: "the request is malformed",
    401: "a valid token is required",
    403: "this request is not allowed",
    404: "nothing is served at this path",
    405: "this method is not allowed here",
    409: "the request conflicts with the project's state",
    413: "the request body is too large",
}


def json_response(data: object, status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)


def error_response(status: int, message: str) -> Response:
    """Control characters escaped, line breaks kept: a run that cannot start says why
    with the code frame of its syntax error, which the page shows as lines."""
    return JSONResponse({"error": keep_lines(message)}, status_code=status)


def status_for(err: UnotestError) -> int:
    """The one mapping: missing → 404, exists → 409, too large → 413, a broken file of the
    project (config, .debugger.json) → 409, any other error of the tree → 400."""
    if isinstance(err, FileMissing):
        return 404
    if isinstance(err, FileExists):
        return 409
    if isinstance(err, TooLarge):
        return 413
    if isinstance(err, ConfigError):
        return 409
    if isinstance(err, UsageError):
        return 400
    return 400


async def json_body(request: Request) -> object:
    """The request's JSON (the security middleware has bounded its size); 400 otherwise."""
    raw = await request.body()
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
        raise UsageError("the body is not valid JSON") from None


async def _unotest_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, UnotestError)
    return error_response(status_for(exc), str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, _STATUS_TEXT.get(exc.status_code, exc.detail))


def error_handlers() -> dict[type[Exception], object]:
    return {UnotestError: _unotest_error, HTTPException: _http_error}
