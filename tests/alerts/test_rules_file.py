"""The rules file: refused at start naming the line, a broken edit ignored while running, a good
one applied once stable and written to the audit log."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from mobkit_console.alerts.config import current_alert_rules, refresh_alert_rules
from mobkit_console.alerts.rules import RulesError, parse_rules
from mobkit_console.audit.models import AuditEntry
from mobkit_console.audit.services import audit_flush

GOOD = """
[[rules]]
id = "quarantine-any"
when = "quarantine.arrived"
notify = ["json://127.0.0.1:9/hook"]
"""

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("text", "line", "words"), [
    (GOOD + '\n[[rules]]\nid = "q2"\nwhen = "quarantine.exploded"\nnotify = ["json://127.0.0.1:9/x"]\n', 9, "when must be one of"),
    (GOOD + '\n[[rules]]\nid = "quarantine-any"\nwhen = "quarantine.arrived"\nnotify = ["json://h/x"]\n', 7, "already used"),
    ('[[rules]]\nid = "burst"\nwhen = "writes.burst"\nnotify = ["json://127.0.0.1:9/x"]\n', 3, "needs a threshold"),
    ('[[rules]]\nid = "w"\nwhen = "quarantine.arrived"\nwindow = "soon"\nnotify = ["json://127.0.0.1:9/x"]\n', 4, "window must be a duration"),
    ('[[rules]]\nid = "n"\nwhen = "quarantine.arrived"\n\nnotify = ["nosuchscheme://x"]\n', 5, "neither an Apprise URL"),
    ('[[rules]]\nid = "t"\nwhen = "tile.violated"\ntile = "moon"\nnotify = ["json://127.0.0.1:9/x"]\n', 4, "tile must be one of"),
    ('[[rules]]\nid = "x"\nwhen = "quarantine.arrived"\nnotify = "json://h/x"\n', 4, "non-empty list"),
    ('[[rules]]\nid = "x"\nwhen = "quarantine.arrived"\nnotify = [\n', 4, "could not be parsed"),
])
def test_a_broken_rule_is_refused_naming_its_line(text, line, words):
    with pytest.raises(RulesError) as caught:
        parse_rules(text.encode())
    assert f"line {line}" in str(caught.value)
    assert words in str(caught.value)


def test_a_signed_webhook_without_its_secret_is_refused(settings):
    settings.MOBKIT_ALERTS_WEBHOOK_SECRET = None
    with pytest.raises(RulesError, match="line 4: .*MOBKIT_ALERTS_WEBHOOK_SECRET"):
        parse_rules(b'[[rules]]\nid = "s"\nwhen = "quarantine.arrived"\nnotify = ["mobkit+https://hooks.example.test/a"]\n')


def test_a_broken_rules_file_stops_the_start(alert_rules):
    with pytest.raises(ImproperlyConfigured, match=r"alerts.toml: line 3: rule 'bad'"):
        alert_rules('[[rules]]\nid = "bad"\nwhen = "nothing"\nnotify = ["json://127.0.0.1:9/x"]\n')


def test_a_broken_edit_is_ignored_and_a_good_one_applies_and_is_audited(alert_rules, settings, monkeypatch):
    monkeypatch.setattr("access.settled_file.RECHECK_INTERVAL_S", 0)
    loaded = alert_rules(GOOD)
    path = settings.MOBKIT_ALERTS_CONFIG
    path.write_text(GOOD + '\n[[rules]]\nid = "half"\nwhen = "writes.bur')
    assert refresh_alert_rules().revision == loaded.revision  # the last good rules stay
    assert [rule.id for rule in current_alert_rules().rules] == ["quarantine-any"]

    path.write_text(GOOD + '\n[[rules]]\nid = "burst"\nwhen = "writes.burst"\nthreshold = 5\nnotify = ["json://127.0.0.1:9/b"]\n')
    assert [rule.id for rule in refresh_alert_rules().rules] == ["quarantine-any", "burst"]
    audit_flush()
    entry = AuditEntry.objects.get(action="alerts.reload")
    assert entry.detail["added"] == ["burst"] and entry.subject == ""
