"""The access explainer's answers (docs/access.md §2.9): why a subject may or may not do something,
what it may reach, which rules are in force, and the latest denials.

Nothing here decides access itself. A question is turned into the checks the console's own gates
make (``memory_panel.visibility.scope_grants``/``record_grants``), and each check is answered by
``Access.explain``, the engine every page, method and socket goes through, for the explained
subject under the same config snapshot as the explaining request (``access_as``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from access.caller import Access, Caller, access_as, can_read_access
from access.engine import ACCESS_ACTIONS, Explanation, Rule
from memory_panel.errors import AccessDenied, InvalidParams, NotFound, StoreFailed
from memory_panel.selectors.holdings import realm_holdings
from memory_panel.store.realms import realm_alias
from memory_panel.store.records import MemoryRecord, decode_record
from memory_panel.store.rows import full_rows, panel_realms, realm_read, realm_rows
from memory_panel.visibility import (
    READ_ACTIONS,
    REVIEW,
    SCOPE_READ_ACTION,
    Grant,
    record_grants,
    scope_checker,
    scope_grants,
    sees_quarantined,
)
from memory_panel.wire.params import parse_realm
from mobkit_console.audit.models import AuditEntry
from mobkit_console.audit.selectors import ENTRY_FIELDS, entry_json
from mobkit_console.rpc.registry import method_names_for
from mobkit_console.shell import memory_nav

SUBJECT_MAX_CHARS = 254  # the longest subject the audit log keeps
GROUPS_MAX = 50
RECENT_DENIALS = 50
# A record is explained for reading it: these are the actions its chain of grants answers.
RECORD_ACTIONS = (*READ_ACTIONS, REVIEW)


class BadField(InvalidParams):
    """An explainer parameter the console refuses, naming it (400 JSON with ``field``)."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field} {detail}")
        self.field = field


def require_access_reader(access: Access) -> None:
    """Access admins and console admins (docs/access.md §2.9); AccessDenied (403, audited) otherwise."""
    if not can_read_access(access):
        raise AccessDenied("access.admin", None)


# ---------------------------------------------------------------------------------------------
# The question


@dataclass(frozen=True)
class Question:
    subject: str
    groups: frozenset[str]  # as an identity provider would vouch for them
    action: str
    identity: str | None = None
    memory_id: str | None = None
    realm: str | None = None
    mob: str | None = None
    operator: str | None = None


def _text(params: dict[str, str], name: str) -> str | None:
    value = params.get(name, "").strip()
    if not value:
        return None
    if len(value) > SUBJECT_MAX_CHARS or not value.isprintable():
        raise BadField(name, f"must be printable text of at most {SUBJECT_MAX_CHARS} characters")
    return value


def question_parse(params: dict[str, str]) -> Question:
    """explain.json's query string; BadField naming the parameter that is wrong."""
    subject = _text(params, "subject")
    if subject is None:
        raise BadField("subject", "is required")
    action = _text(params, "action")
    if action is None:
        raise BadField("action", "is required")
    if action not in ACCESS_ACTIONS:
        raise BadField("action", f"must be one of the {len(ACCESS_ACTIONS)} actions, not '{action}'")
    groups = frozenset(g.strip() for g in params.get("groups", "").split(",") if g.strip())
    if len(groups) > GROUPS_MAX or any(len(g) > SUBJECT_MAX_CHARS or not g.isprintable() for g in groups):
        raise BadField("groups", f"must be at most {GROUPS_MAX} comma-separated printable names")
    resources = {name: _text(params, name) for name in ("identity", "memory_id", "mob", "operator")}
    named = [name for name, value in resources.items() if value is not None]
    if len(named) > 1:
        raise BadField(named[1], f"cannot be asked together with {named[0]}: explain one resource at a time")
    realm_text = _text(params, "realm")
    if realm_text is not None and named and named[0] != "memory_id":
        raise BadField("realm", f"goes with memory_id (a record in that realm) or alone, not with {named[0]}")
    try:
        realm = parse_realm(realm_text)
    except InvalidParams as error:
        raise BadField("realm", f"names no realm: '{realm_text}'") from error
    if resources["memory_id"] is not None and action not in RECORD_ACTIONS:
        raise BadField("action", f"with memory_id must be one that reads a record ({', '.join(RECORD_ACTIONS)})")
    return Question(subject=subject, groups=groups, action=action, realm=realm, **resources)


# ---------------------------------------------------------------------------------------------
# The answer


@dataclass(frozen=True)
class Check:
    """One grant the answer needs: an action on an agent (or resource-less) and the engine's verdict."""

    action: str
    identity: str | None
    explanation: Explanation


@dataclass(frozen=True)
class Answer:
    question: Question
    resource: str  # what was asked about, in words
    checks: tuple[Check, ...]

    @property
    def allowed(self) -> bool:
        return all(check.explanation.allowed for check in self.checks)

    @property
    def decisive(self) -> list[str]:
        """Denied: the rules behind each failing check (deny overrides); allowed: the allows that granted."""
        deciding = [c for c in self.checks if c.explanation.allowed is self.allowed]
        return _unique(rule_id for check in deciding for rule_id in check.explanation.decisive)

    @property
    def matched(self) -> list[str]:
        return _unique(rule_id for check in self.checks for rule_id in check.explanation.matched)

    @property
    def summary(self) -> str:
        subject = self.question.subject
        if self.allowed:
            bases = {check.explanation.basis for check in self.checks}
            why = ("access control is off" if bases == {"disabled"} else f"{subject} is an admin" if bases == {"admin"}
                   else f"by {_listed('rule', self.decisive)}")
            return f"Allowed: {subject} may {self.question.action} on {self.resource}, {why}."
        failing = next(c for c in self.checks if not c.explanation.allowed)
        on = f" on {failing.identity}" if failing.identity else ", resource-less"
        return (f"Denied: {subject} may not {self.question.action} on {self.resource} "
                f"(needs {failing.action}{on}: {failing.explanation.reason}).")

    def as_json(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "decisive": self.decisive, "matched": self.matched, "summary": self.summary}


def _unique(ids: Any) -> list[str]:
    return list(dict.fromkeys(ids))


def _listed(word: str, ids: list[str]) -> str:
    return f"{word} {ids[0]}" if len(ids) == 1 else f"{word}s {', '.join(ids)}"


def explained_access(access: Access, question: Question) -> Access:
    """The explained subject's Access under the explaining request's config snapshot."""
    return access_as(access, Caller(subject=question.subject, vouched_groups=question.groups))


def explain_question(*, access: Access, question: Question) -> Answer:
    """Answer ``question`` with the checks the console's gates make for it (docs/access.md §2.9)."""
    subject = explained_access(access, question)
    action = question.action
    if question.memory_id is not None:
        record = record_located(memory_id=question.memory_id, realm=question.realm)
        grants = record_grants(record)
        resource = f"record {record.id} in realm {record.realm}"
    elif question.identity is not None:
        grants = _scope_or_plain("identity", question.identity, action, resource_key=question.identity)
        resource = question.identity
    elif question.mob is not None:
        grants = _scope_or_plain("mob", question.mob, action, resource_key=None)
        resource = f"mob {question.mob}"
    elif question.operator is not None:
        grants = _scope_or_plain("operator", question.operator, action, resource_key=None)
        resource = f"operator scope {question.operator}"
    elif question.realm is not None:
        grants = _scope_or_plain("realm", "", action, resource_key=None)
        resource = f"realm {question.realm}"
    else:
        grants = ((action, None),)
        resource = "no particular resource"
    checks = tuple(Check(a, identity, subject.explain(a, identity)) for a, identity in grants)
    return Answer(question, resource, checks)


def _scope_or_plain(kind: str, key: str, action: str, *, resource_key: str | None) -> tuple[Grant, ...]:
    """Reading a scope's memory is that scope's chain of grants; any other action is one check
    (on the agent for an identity; MobKit has no mob, operator or realm resources)."""
    if SCOPE_READ_ACTION[kind] == action:
        return scope_grants(kind, key)
    return ((action, resource_key),)


def record_located(*, memory_id: str, realm: str | None) -> MemoryRecord:
    """The record, whoever may read it (the explainer's readers may see who may); the first realm holding it wins."""
    for name in panel_realms(realm):
        with realm_read(name, alone=realm is not None):
            row = full_rows(realm_alias(name), name).filter(memory_id=memory_id).first()
        if row is not None:
            return decode_record(name, row)
    raise NotFound(f"unknown memory record '{memory_id}'")


# ---------------------------------------------------------------------------------------------
# Access map, rules, denials


@dataclass(frozen=True)
class AccessMap:
    realms: list[str]  # realms holding at least one scope the subject may read
    scopes: dict[str, list[tuple[str, str]]]  # scope kind -> [(realm, key)] the subject may read
    pages: list[str]
    methods: list[str]


# The console's pages by the nav entry that opens them (docs/ui.md §5) and who sees each.
PAGES = (
    ("Holdings", "can_read"), ("Records", "can_read"), ("Knowledge", "can_read"), ("Pipeline", "can_read"),
    ("Quarantine", "can_review_quarantine"), ("Dreams", "can_read"), ("Timeline", None), ("Ledger", "can_read"),
    ("Recall", "can_read"), ("Legacy", "can_read"),
)


def access_map(*, access: Access, question: Question) -> AccessMap:
    """What the explained subject may list: the scopes of every realm it may read, its pages and methods."""
    subject = explained_access(access, question)
    readable = scope_checker(subject)
    # As Holdings counts (docs/access.md §2.8): without review, a scope of quarantined rows alone is not listed.
    with_quarantined = sees_quarantined(subject)
    held, _ = realm_rows(None, lambda name: list(realm_holdings(name, with_quarantined=with_quarantined)))
    scopes: dict[str, list[tuple[str, str]]] = {}
    for scope in held:
        if readable(scope.scope_kind, scope.scope_key):
            scopes.setdefault(scope.scope_kind, []).append((scope.realm, scope.scope_key))
    nav = memory_nav(subject)
    pages = [page for page, gate in PAGES if gate is None or nav[gate]]
    if can_read_access(subject):
        pages += ["Audit", "Access"]
    realms = sorted({realm for listed in scopes.values() for realm, _ in listed})
    return AccessMap(realms, scopes, pages, method_names_for(subject))


@dataclass(frozen=True)
class RuleReach:
    rule: Rule
    reaches: list[str]  # subjects, group members, "everyone" or "every signed-in subject"


def rules_in_force(access: Access) -> list[RuleReach]:
    """Every rule of the config in force, with the subjects it reaches by name or group."""
    config = access.config
    out = []
    for rule in config.rules:
        if not rule.subjects and not rule.groups:
            reaches = ["everyone, anonymous callers included"]
        else:
            named = ["every signed-in subject" if s == "*" else s for s in rule.subjects]
            members = [f"{member} (group {group})" for group in rule.groups for member in config.groups[group].members]
            vouched = [f"anyone an identity provider vouches into {g}" for g in rule.groups]
            reaches = _unique([*named, *members, *vouched])
        out.append(RuleReach(rule, reaches))
    return out


def last_reload() -> dict[str, Any] | None:
    """The newest access.toml reload the audit log holds: what it added, removed and changed."""
    entry = AuditEntry.objects.filter(action="access.reload").order_by("-id").values(*ENTRY_FIELDS).first()
    return None if entry is None else entry_json(entry)


@dataclass(frozen=True)
class Denial:
    entry: dict[str, Any]
    explain_query: dict[str, str] | None  # the question that explains it, when it can be asked


def recent_denials(*, limit: int = RECENT_DENIALS) -> list[Denial]:
    """The latest access.denied entries, each with the question that explains it."""
    rows = AuditEntry.objects.filter(action="access.denied").order_by("-id").values(*ENTRY_FIELDS)[:limit]
    return [Denial(entry_json(row), _denial_question(row)) for row in rows]


def _denial_question(row: dict[str, Any]) -> dict[str, str] | None:
    action = (row["detail"] or {}).get("missing")
    if not row["subject"] or action not in ACCESS_ACTIONS:
        return None
    query = {"subject": row["subject"], "action": action}
    target = row["target"]
    if target:
        # A denial names a record id or an agent identity; a record id some realm holds is a record.
        is_record = action in RECORD_ACTIONS and _record_exists(target)
        query |= {"memory_id": target} if is_record else {"identity": target}
    return query


def _record_exists(memory_id: str) -> bool:
    try:
        record_located(memory_id=memory_id, realm=None)
    except (NotFound, StoreFailed):  # an unreadable realm: the link asks about the agent instead
        return False
    return True
