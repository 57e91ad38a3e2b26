"""Who is in the demo realms, and the taint reasons their tainted sessions carry."""

from __future__ import annotations

DEFAULT_REALM = "default"
SECOND_REALM = "team:blue"
DAY_MS = 86_400_000
IDENTITIES = ("identity:luka", "identity:ana", "identity:router", "identity:mira", "identity:tomas")
MOB = "ops"
OPERATOR_NAME = "oncall"
# The operator who reviews quarantined records (a QuarantineReviewer, docs/store-format.md §3).
OPERATOR_REVIEWER = {"kind": "operator", "principal": "maria@example.com"}
# docs/store-format.md §6 taint sources, as the LLM write gate words its reason (§7.2).
TAINT_WEB = "session tainted by web tool 'web_fetch'"
TAINT_MCP = "session tainted by MCP server 'scraper' (tool 'get_page')"


def session_key(identity: str, n: int) -> str:
    """A believable session id for an identity's n-th session: ``sess-luka-009``."""
    return f"sess-{identity.split(':', 1)[1]}-{n:03d}"
