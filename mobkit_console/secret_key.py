"""The per-installation signing key, for a console started without ``DJANGO_SECRET_KEY``.

Settings.py imports it, so it imports nothing of the project. Signing sessions with a key committed to the repository
would let anyone who read the source forge a session; a key generated once per installation and
kept in the state directory (readable by the console's user alone) cannot be guessed, and
survives restarts, so sessions do too.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger("mobkit_console")

KEY_FILE_NAME = "secret_key"


def installation_secret_key(state_dir: Path) -> str:
    """The key kept in ``state_dir/secret_key``, generated (mode 0600) and logged the first time."""
    path = state_dir / KEY_FILE_NAME
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        key = ""
    except OSError as error:
        raise _cannot_keep(state_dir, error) from error
    if key:
        return key
    scratch = state_dir / f".{KEY_FILE_NAME}.{os.getpid()}"
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as error:
        raise _cannot_keep(state_dir, error) from error
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_urlsafe(50) + "\n")
    try:
        # A hard link never replaces a file: of two processes starting at once, one key wins.
        os.link(scratch, path)
    except FileExistsError:
        pass
    else:
        logger.warning(
            "DJANGO_SECRET_KEY is not set: generated a signing key for this installation in %s "
            "(readable by this user only); set DJANGO_SECRET_KEY to use your own",
            path,
        )
    finally:
        scratch.unlink()
    key = path.read_text(encoding="utf-8").strip()
    if not key:  # an empty file someone left there: never sign with an empty key
        raise ImproperlyConfigured(f"{path} is empty: delete it to have a key generated, or set DJANGO_SECRET_KEY")
    return key


def _cannot_keep(state_dir: Path, error: OSError) -> ImproperlyConfigured:
    return ImproperlyConfigured(
        f"DJANGO_SECRET_KEY is not set and no signing key can be kept in {state_dir} ({error}): "
        "set DJANGO_SECRET_KEY, or let the console write there"
    )
