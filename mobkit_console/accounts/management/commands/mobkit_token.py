"""``manage.py mobkit_token SUBJECT``: a new bearer token, printed as the last line of stdout."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from mobkit_console.accounts.tokens import token_issue, user_for_subject


class Command(BaseCommand):
    help = "Create the user for SUBJECT if missing and print a new bearer token for it (last line)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("subject", help="an email (matched by access.toml) or a plain username")

    def handle(self, *args, subject: str, **options) -> None:
        subject = subject.strip()
        if not subject:
            raise CommandError("SUBJECT must not be empty")
        limit = get_user_model()._meta.get_field("username").max_length
        if len(subject) > limit:
            raise CommandError(f"SUBJECT must be at most {limit} characters (it becomes the username)")
        user = user_for_subject(subject)
        token = token_issue(user=user)
        self.stderr.write(f"Token for '{subject}' (shown once; only its hash is stored):")
        self.stdout.write(token)
