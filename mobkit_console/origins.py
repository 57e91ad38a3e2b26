"""Web origins (scheme, host, port), for settings and the socket origin check alike. Stdlib only:
settings.py imports it."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

Origin = tuple[str, str, int]  # what makes two pages the same origin
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_parse(text: str) -> Origin | None:
    """``https://console.example.com`` → ("https", "console.example.com", 443); None if not an origin."""
    parts = urlsplit(text.strip())
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username is not None:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def console_origin(origin: str | None, *, served: str, allowed: Sequence[str]) -> bool:
    """Is ``origin`` (a request's Origin header) the console's own?

    The console's own origin is every entry of ``allowed`` (MOBKIT_ALLOWED_ORIGINS: the public
    origin behind a proxy) when set, else ``served``, the origin the request reached the console
    on. Scheme, host and port must all match: a page on another port of the same host is foreign.
    """
    parsed = origin_parse(origin or "")
    if parsed is None:
        return False
    if allowed:
        return parsed in {origin_parse(entry) for entry in allowed}
    return parsed == origin_parse(served)
