"""``MOBKIT_REPLICA_SOURCES``: which Litestream replica stores the console follows, by label.
Stdlib only: settings.py imports it (docs/replicas.md §2)."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

# A label is the first part of every replica realm's name (``<label>/<realm>``, docs/replicas.md §1),
# and a directory name under the console's state: letters, digits, '-' and '_' only.
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://.+")


def redacted(url: str) -> str:
    """The URL as it may be shown or logged: an SFTP password in it becomes ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{parts.netloc.rpartition('@')[2]}"))


def redacted_in(text: str, url: str) -> str:
    """``text`` (Litestream's own words about a source, say) without the password ``url`` carries."""
    password = urlsplit(url).password
    # As written in the URL, decoded, and encoded again the way Go writes it (%3A, not %3a).
    for written in sorted({password, unquote(password), quote(unquote(password), safe="")}, key=len, reverse=True) if password else ():
        text = text.replace(written, "***")
    return text


class ReplicaSourcesInvalid(ValueError):
    """The variable's text, said back with what is wrong with it."""


def replica_sources_parse(text: str) -> dict[str, str]:
    """``"east=file:///srv/replicas,west=s3://bucket/mobkit"`` → {"east": "file:///srv/replicas", …}.

    Entries are comma-separated ``label=URL`` pairs; the URL is any replica URL Litestream takes
    (it keeps everything after the first '='). Empty text means no sources.
    """
    sources: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        label, sep, url = (piece.strip() for piece in entry.partition("="))
        if not sep:
            raise ReplicaSourcesInvalid(f"{redacted(entry)!r} is not label=<replica URL>")
        if not _LABEL.fullmatch(label):
            raise ReplicaSourcesInvalid(
                f"label {label!r} must be 1-64 letters, digits, '-' or '_', starting with a letter or digit"
            )
        if label in sources:
            raise ReplicaSourcesInvalid(f"label {label!r} is given twice")
        if not _URL.fullmatch(url):
            raise ReplicaSourcesInvalid(
                f"{label}: {redacted(url)!r} is not a replica URL like file:///srv/replicas or s3://bucket/prefix"
            )
        sources[label] = url.rstrip("/")
    return sources
