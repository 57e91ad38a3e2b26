from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from mobkit_console.accounts.models import ApiToken
from mobkit_console.accounts.tokens import user_for_token

pytestmark = pytest.mark.django_db


def issue(subject: str) -> str:
    out = StringIO()
    call_command("mobkit_token", subject, stdout=out, stderr=StringIO())
    return out.getvalue().strip().splitlines()[-1]


def test_mobkit_token_prints_token_last_and_creates_user_with_email_for_email_subject():
    token = issue("alice@example.com")

    user = get_user_model().objects.get(username="alice@example.com")
    assert user.email == "alice@example.com"
    assert not user.has_usable_password()
    assert user_for_token(token) == user


def test_mobkit_token_plain_subject_is_username_without_email():
    token = issue("ci-runner")

    user = get_user_model().objects.get(username="ci-runner")
    assert user.email == ""
    assert user_for_token(token) == user


def test_mobkit_token_reuses_existing_user_and_issues_distinct_tokens():
    first, second = issue("bob@example.com"), issue("bob@example.com")

    assert first != second
    assert get_user_model().objects.filter(username="bob@example.com").count() == 1
    assert ApiToken.objects.filter(user__username="bob@example.com").count() == 2


def test_mobkit_token_rejects_blank_subject():
    with pytest.raises(CommandError, match="must not be empty"):
        call_command("mobkit_token", "  ", stdout=StringIO(), stderr=StringIO())


def test_mobkit_token_rejects_subject_longer_than_a_username():
    with pytest.raises(CommandError, match="at most 150 characters"):
        call_command("mobkit_token", "x" * 151 + "@example.com", stdout=StringIO(), stderr=StringIO())
    assert not get_user_model().objects.exists()


def test_token_stored_as_sha256_never_raw():
    token = issue("carol@example.com")

    row = ApiToken.objects.get()
    assert row.token_sha256 == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {row.prefix, row.token_sha256}
    assert token.startswith(row.prefix)


@pytest.mark.parametrize("raw", ["", "   ", "mkc_not-a-real-token", "Bearer"])
def test_unknown_or_empty_token_resolves_to_nobody(raw):
    issue("dave@example.com")
    assert user_for_token(raw) is None


def test_token_of_deactivated_user_resolves_to_nobody():
    token = issue("erin@example.com")
    get_user_model().objects.filter(username="erin@example.com").update(is_active=False)

    assert user_for_token(token) is None


def test_use_records_last_used_at():
    token = issue("frank@example.com")
    assert ApiToken.objects.get().last_used_at is None

    user_for_token(token)

    assert ApiToken.objects.get().last_used_at is not None
