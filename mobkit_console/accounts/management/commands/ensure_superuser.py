"""``manage.py ensure_superuser``: the first admin of a deployment, created without a prompt (README
"Serving in production"). ``bin/serve`` runs it when ``DJANGO_SUPERUSER_USERNAME`` is set."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError


class Command(BaseCommand):
    help = ("Create the superuser DJANGO_SUPERUSER_USERNAME with DJANGO_SUPERUSER_PASSWORD (and "
            "DJANGO_SUPERUSER_EMAIL, if set) unless a user of that name exists, which is left as it is. "
            "The password is never printed.")

    def handle(self, *args, **options) -> None:
        # Django's own variables, which its `createsuperuser --noinput` reads; read here to know whether
        # that user exists already, and because without an email that command stops unless given "".
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME", "").strip()
        if not username or not os.environ.get("DJANGO_SUPERUSER_PASSWORD"):
            raise CommandError("set DJANGO_SUPERUSER_USERNAME and DJANGO_SUPERUSER_PASSWORD "
                               "(DJANGO_SUPERUSER_EMAIL too, if the admin signs in by email)")
        if self._exists(username):
            self._left_as_it_is(username)
            return
        try:
            call_command("createsuperuser", interactive=False, verbosity=0,
                         email=os.environ.get("DJANGO_SUPERUSER_EMAIL", ""))
        except (CommandError, IntegrityError):
            if not self._exists(username):
                raise
            # Another server process starting at the same moment created it first.
            self._left_as_it_is(username)
            return
        self.stdout.write(f"Created the superuser '{username}'.")

    @staticmethod
    def _exists(username: str) -> bool:
        return get_user_model()._default_manager.filter(username=username).exists()

    def _left_as_it_is(self, username: str) -> None:
        self.stdout.write(f"The user '{username}' exists already: left as it is, password unchanged.")
