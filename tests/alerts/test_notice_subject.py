"""docs/alerts.md §5: a rule's ``as_subject`` names a subject or an access.toml group, and the notice
is bounded by what that subject, or a bare member of that group, may read."""

from __future__ import annotations

import pytest

from memory_panel.visibility import can_read_memory, sees_quarantined
from mobkit_console.alerts.notices import subject_access
from tests.support.postures import NOBODY, READER, REVIEWER

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("as_subject", "reads", "reviews"),
    [
        (REVIEWER, True, True),
        (READER, True, False),
        ("reviewers", False, True),  # the group's own grants, not its members' other groups
        ("readers", True, False),
        (NOBODY, False, False),
        ("no-such-group-or-subject", False, False),
    ],
)
def test_a_notice_is_bounded_by_its_subject_or_group(posture, as_subject, reads, reviews):
    posture("standard")

    access = subject_access(as_subject)

    assert (can_read_memory(access), sees_quarantined(access)) == (reads, reviews)
    assert not access.is_admin
