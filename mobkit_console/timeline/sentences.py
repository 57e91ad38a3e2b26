"""What an event says, as one sentence (docs/timeline-live.md §7).

The first render and the live socket both build a row's sentence here and render it with the
same template, so a live row reads exactly as it will after a reload. Every value comes from the
event's data and is escaped by the template; a record the event names is left as a slot the
template fills with its title (or its id, for a caller who may not read it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory_panel.wording import author_words, count_words, scope_words, value_words

from .events import SYSTEM_IDENTITY, record_link

RECORD = object()  # where the record the event names goes in its sentence
Parts = tuple[object, ...]  # text, with RECORD at most once


@dataclass(frozen=True)
class Sentence:
    before: str
    names_record: bool = False  # the event's record (events.record_link) follows ``before``
    after: str = ""


def type_words(event_type: str) -> str:
    """``memory.quarantine.release_blocked`` → "quarantine: release blocked", for the type filter."""
    family, _, what = event_type.removeprefix("memory.").partition(".")
    return f"{family}: {what.replace('_', ' ')}" if what else family


def event_sentence(event_type: str, identity: str, data: dict[str, Any]) -> Sentence:
    say = _SENTENCES.get(event_type)
    parts = say(_Facts(identity, data)) if say else (f"{event_type} happened",)
    linked = record_link(data) is not None
    if RECORD not in parts:
        return Sentence("".join(parts))
    at = parts.index(RECORD)
    before, after = "".join(parts[:at]), "".join(parts[at + 1 :])
    if linked:
        return Sentence(before, True, after)
    record_id = data.get("record_id")
    if record_id is None:
        # docs/access.md §2.8: the caller may not read the record, and its id was withheld (named.py).
        return Sentence(f"{before}a record{after}")
    return Sentence(f"{before}record {_text(record_id)}{after}")


class _Facts:
    """The event's values as text: a missing or odd value never breaks a sentence."""

    def __init__(self, identity: str, data: dict[str, Any]) -> None:
        self.identity, self.data = identity, data

    def __getitem__(self, key: str) -> str:
        return _text(self.data.get(key))

    def who(self, fallback: str) -> str:
        """The agent the event is about: its envelope identity, else ``data.identity``, else ``fallback``."""
        if self.identity != SYSTEM_IDENTITY:
            return self.identity
        named = self.data.get("identity")
        return named if isinstance(named, str) and named else fallback

    @property
    def scope(self) -> str:
        kind, key = self.data.get("scope_kind"), self.data.get("scope_key")
        return scope_words(kind, key) if isinstance(kind, str) and isinstance(key, str) else "its scope"

    @property
    def realm(self) -> str:
        realm = self.data.get("realm")
        return f"realm {realm}" if isinstance(realm, str) and realm else "the realm"

    def count(self, key: str, noun: str) -> str:
        value = self.data.get(key)
        n = len(value) if isinstance(value, (list, dict)) else value
        if isinstance(n, bool) or not isinstance(n, int):
            return f"some {noun}s"
        return count_words(n, noun)


def _text(value: Any) -> str:
    text = value_words(value)
    return text if len(text) <= 200 else f"{text[:197]}…"


def _record_written(verb: str, passive: str) -> Callable[[_Facts], Parts]:
    def say(f: _Facts) -> Parts:
        if f.identity != SYSTEM_IDENTITY:
            return (f"{f.identity} {verb} ", RECORD)
        return (RECORD, f" in {f.scope} was {passive}")
    return say


def _promoted(f: _Facts) -> Parts:
    if f.data.get("gated") is True:
        return (RECORD, f" was promoted to {f.scope} once an operator approved the gate")
    # A steward's direct accept names the proposal as record_id (docs/store-format.md §6).
    return (f"a dream accepted proposal {f['proposal_id'] if f.data.get('proposal_id') else f['record_id']}"
            f" into {f.scope}",)


def _verdict(f: _Facts) -> Parts:
    verdict = f.data.get("verdict")
    if verdict == "release":
        return ("review released ", RECORD, " from quarantine")
    if verdict == "tombstone":
        return ("review tombstoned ", RECORD, ", which was in quarantine")
    return ("review decided ", RECORD, f": {f['verdict']}")


def _write_quarantined(f: _Facts) -> Parts:
    author = author_words(f.data.get("author"))
    # The watcher names the batch's first quarantined record (docs/timeline.md §T.8); MobKit's own
    # event names none, and a caller without review is not told which it was (named.py).
    if isinstance(f.data.get("record_id"), str):
        return (f"a write by {author} was quarantined: ", RECORD, f" ({f['reason']})")
    return (f"a write by {author} was quarantined: {f['reason']}",)


def _taint(f: _Facts) -> Parts:
    who = f.who("a session")
    session = f"{who}'s session {f['session_key']}" if who != "a session" else f"session {f['session_key']}"
    kind = f.data.get("kind")
    if kind == "tainted":
        return (f"{session} was tainted by {f['source']}",)
    if kind == "rotated_clean":
        return (f"{session} rotated to a clean session",)
    if kind == "reset_boundary":
        return (f"{session} reached a reset boundary",)
    return (f"{session} changed taint: {f['kind']}",)


def _pending(f: _Facts) -> Parts:
    return (RECORD, f" waits at the gate for promotion to {f.scope}")


def _hygiene(what: str) -> Callable[[_Facts], Parts]:
    def say(f: _Facts) -> Parts:
        head = f"hygiene for {f.who('an agent')}"
        if what in ("blocked", "skipped"):
            return (f"{head} was {what}: {f['reason']}",)
        tail = f", now at revision {f['revision']}" if what == "applied" and "revision" in f.data else ""
        return (f"{head} {what} {f.count('ops', 'op')} ({f['cause']}){tail}",)
    return say


_SENTENCES: dict[str, Callable[[_Facts], Parts]] = {
    # A run's id stays in the raw event: the sentence names the dream by its realm and the row's time.
    "memory.dream.started": lambda f: (f"a dream on {f.realm} started",),
    "memory.dream.completed": lambda f: (f"a dream on {f.realm} committed {f.count('ops_committed', 'op')}",),
    "memory.dream.skipped": lambda f: (f"a dream on {f.realm} was skipped: {f['reason']}",),
    "memory.record.promoted": _promoted,
    "memory.quarantine.verdict": _verdict,
    "memory.quarantine.release_blocked": lambda f: (
        "releasing ", RECORD, f" was blocked: it holds a secret ({f['class']})"),
    "memory.conflict.signal": lambda f: (
        f"a conflict about {f['entity']} ({f['topic']}) on {f.realm}: {f['reason']}",),
    "memory.write.quarantined": _write_quarantined,
    "memory.taint.transition": _taint,
    "memory.budget.denied": lambda f: (f"the memory budget refused {f['stage']} on {f.realm}: {f['reason']}",),
    "memory.promotion.pending_gate": _pending,
    "memory.harvest.completed": lambda f: (
        f"the harvest for {f.who('an agent')} promoted {f.count('promoted', 'record')}"
        f" and tombstoned {f.count('tombstoned', 'record')}",),
    "memory.distill.timed_out": lambda f: (
        f"distilling {f.who('an agent')}'s session {f['session_key']} timed out: {f['cause']}",),
    "memory.hygiene.proposed": _hygiene("proposed"),
    "memory.hygiene.applied": _hygiene("applied"),
    "memory.hygiene.blocked": _hygiene("blocked"),
    "memory.hygiene.skipped": _hygiene("skipped"),
    "memory.record.remembered": _record_written("remembered", "written"),
    "memory.record.updated": _record_written("updated", "updated"),
    "memory.record.forgotten": _record_written("forgot", "forgotten"),
}
