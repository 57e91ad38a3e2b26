"""``manage.py mobkit_token SUBJECT``: a new bearer token, printed as the last line of stdout."""

from __future__ import annotations

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
        if len(subject) > 150:
            raise CommandError("SUBJECT must be at most 150 characters (Django's username limit)")
        user = user_for_subject(subject)
        token = token_issue(user=user)
        self.stderr.write(f"Token for '{subject}' (shown once; only its hash is stored):")
        self.stdout.write(token)
