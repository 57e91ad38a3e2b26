"""Console users and signed-in Django test clients, by subject (docs/wire-contract.md §C.1)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.test import Client


def user_with_subject(subject: str) -> User:
    """A user whose subject is ``subject``: its username, and its email when it has an '@'."""
    return get_user_model().objects.create_user(subject, email=subject if "@" in subject else "")


def local_part_user(subject: str) -> User:
    """The user named by the email's local part, with ``subject`` as its email (get or create)."""
    user, _ = get_user_model().objects.get_or_create(
        username=subject.split("@")[0], defaults={"email": subject}
    )
    return user


def signed_in_client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def choose_realm(client: Client, realm: str) -> None:
    """Choose ``realm`` ("" for all realms) with the header's switcher, the one way to change the choice."""
    response = client.post("/console/memory/realm/", {"realm": realm, "next": "/console/memory/"})
    assert response.status_code == 303, response.content
