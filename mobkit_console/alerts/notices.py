"""What one notification says, bounded by the rule's ``as_subject`` (docs/alerts.md §5).

Without ``as_subject`` a notice carries ids and counts only. With it, a record is named by its
title only where that subject (or that access.toml group) may read the record; a body is never
sent, quarantined or not.
"""

from __future__ import annotations

from typing import Any

from access.caller import Access, Caller, access_as, access_for
from memory_panel.selectors.named_records import record_titles

from .conditions import Observation, RecordRef
from .durations import moment
from .definitions import AlertRule


def subject_access(as_subject: str) -> Access:
    """The access of a subject, or of a bare member of the access.toml group of that name."""
    access = access_for(Caller(subject=as_subject))
    if as_subject in access.config.groups:
        # A member vouched for that group alone, decided as a sign-in's vouched groups are (docs/access.md §2.7).
        return access_as(access, Caller(vouched_groups=frozenset({as_subject})))
    return access


def record_lines(rule: AlertRule, refs: tuple[RecordRef, ...]) -> list[str]:
    titles = record_titles(access=subject_access(rule.as_subject), refs=refs) if rule.as_subject and refs else {}
    return [f"{titles[ref]} ({ref[1]}, {ref[0]})" if ref in titles else f"{ref[1]} ({ref[0]})" for ref in refs]


def notice_payload(*, rule_id: str, condition: str, alert_id: str, notice: str, key: str, since_ms: int,
                   count: int, summary: str, lines: list[str], now_ms: int) -> dict[str, Any]:
    """The JSON a signed webhook receives; Apprise channels get its title and body."""
    heading = {"firing": "FIRING", "resolved": "RESOLVED", "test": "TEST"}[notice]
    body = [summary, f"{'firing since' if notice != 'resolved' else 'resolved at'} {moment(since_ms if notice != 'resolved' else now_ms)}"]
    if lines:
        body += ["records:", *(f"- {line}" for line in lines)]
    body.append(f"alert id {alert_id}")
    return {
        "alert_id": alert_id, "notice": notice, "rule": rule_id, "condition": condition, "key": key,
        "since_ms": since_ms, "count": count, "sent_at_ms": now_ms,
        "title": f"[{heading}] {rule_id}: {summary}"[:250], "body": "\n".join(body),
    }


def observation_lines(rule: AlertRule, observation: Observation) -> list[str]:
    return record_lines(rule, observation.refs)
