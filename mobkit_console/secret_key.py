"""The per-installation signing key, for a console started without ``DJANGO_SECRET_KEY``.

Stdlib only: settings.py imports it. Signing sessions with a key committed to the repository
would let anyone who read the source forge a session; a key generated once per installation and
kept in the state directory (readable by the console's user alone) cannot be guessed, and
survives restarts, so sessions do too.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

logger = logging.getLogger("mobkit_console")

KEY_FILE_NAME = "secret_key"


def installation_secret_key(state_dir: Path) -> str:
    """The key kept in ``state_dir/secret_key``, generated (mode 0600) and logged the first time."""
    path = state_dir / KEY_FILE_NAME
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    state_dir.mkdir(parents=True, exist_ok=True)
    scratch = state_dir / f".{KEY_FILE_NAME}.{os.getpid()}"
    descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
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
    return path.read_text(encoding="utf-8").strip()
