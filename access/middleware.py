"""``request.caller`` for a project that installs memory_panel without the console's sign-in paths.

The console sets the caller in ``mobkit_console.accounts.middleware.CallerMiddleware`` (tokens, JWTs,
the issuer's groups); a host project signs people in with Django's sessions alone, and this is that.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .caller import caller_for_user


class SessionCallerMiddleware:
    """After AuthenticationMiddleware: the session's user as the caller every panel gate takes."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.caller = caller_for_user(request.user, sign_in="session")
        return self.get_response(request)
