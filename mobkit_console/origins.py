"""Web origins (scheme, host, port), for settings and the socket origin check alike. Stdlib only:
settings.py imports it."""

from __future__ import annotations

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
