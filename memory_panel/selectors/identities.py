"""The identities a realm knows, for identity fields: suggestions and the bare-name shorthand (docs/search.md §8).

MobKit identity scope keys are full identities (``identity:luka``); operators type ``luka``.
Both come from the search index's scope list (every scope holding a record), so neither costs a
scan of the realm.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from memory_panel.errors import StoreFailed
from memory_panel.store.realm_memo import realm_memo
from memory_panel.store.rows import panel_realms
from memory_panel.store.search_index import search_index
from memory_panel.visibility import scope_checker

if TYPE_CHECKING:
    from access.caller import Access

IDENTITY_PREFIX = "identity:"
MAX_SUGGESTIONS = 500


@dataclass(frozen=True)
class IdentityChoice:
    """What an identity field holds once read: the key searched, and the text typed when they differ."""

    identity: str | None
    typed: str | None = None  # set when a bare name was read as IDENTITY_PREFIX + name


def _identity_keys(realm: str | None) -> set[str]:
    keys: set[str] = set()
    for name in panel_realms(realm):
        try:
            keys.update(realm_memo(name, "identity_keys", partial(_realm_identity_keys, name)) or ())
        except StoreFailed:  # suggestions are a courtesy: a realm whose index is not ready offers none
            continue
    return keys


def _realm_identity_keys(name: str) -> frozenset[str] | None:
    index = search_index(name)
    return None if index is None else frozenset(key for kind, key in index.scopes() if kind == "identity")


def _readable_identity_keys(access: Access, realm: str | None) -> set[str]:
    readable = scope_checker(access)
    return {key for key in _identity_keys(realm) if readable("identity", key)}


def known_identities(*, access: Access, realm: str | None) -> list[str]:
    """The identity scope keys holding records the caller may read, sorted (at most MAX_SUGGESTIONS)."""
    return sorted(_readable_identity_keys(access, realm))[:MAX_SUGGESTIONS]


def identity_choice(*, access: Access, realm: str | None, typed: str | None) -> IdentityChoice:
    """``luka`` means ``identity:luka`` when no identity scope key is exactly ``luka`` and that one exists.

    Only keys the caller may read are looked at, as for the suggestions: how a name is read must
    not tell a caller that an identity it cannot read exists.
    """
    if typed is None or typed.startswith(IDENTITY_PREFIX):
        return IdentityChoice(typed)
    keys = _readable_identity_keys(access, realm)
    if typed not in keys and IDENTITY_PREFIX + typed in keys:
        return IdentityChoice(IDENTITY_PREFIX + typed, typed=typed)
    return IdentityChoice(typed)
