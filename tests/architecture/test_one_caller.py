"""Who is asking is one value (access/caller.py ``Caller``), made where a caller signs in and taken by
every gate: no page, RPC method, stream or socket can rebuild it from a user or a bare subject and
so drop the groups an identity provider vouched for (docs/audit-and-oidc.md §5)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = sorted(
    path for package in ("access", "memory_panel", "mobkit_console") for path in (ROOT / package).rglob("*.py")
)
# The sign-in paths: the only modules that may turn a signed-in user into a caller.
SIGN_IN_MODULES = {
    "access/caller.py",
    "access/middleware.py",  # a host project's session sign-in
    "mobkit_console/accounts/tokens.py",  # console tokens and JWTs, HTTP and sockets
    "mobkit_console/accounts/oidc_browser.py",  # sessions, and the issuer's browser sign-in
    "mobkit_console/audit/receivers.py",  # names the caller a sign-in just made
}
USER_TO_CALLER = {"caller_for_user", "subject_for_user"}


def called_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


@pytest.mark.parametrize("path", PRODUCTION, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_sign_in_paths_turn_a_user_into_a_caller(path):
    relative = str(path.relative_to(ROOT))
    if relative in SIGN_IN_MODULES:
        return
    assert not called_names(path) & USER_TO_CALLER, f"{relative} builds a caller itself; take request.caller"


def test_the_check_sees_a_call_by_either_spelling(tmp_path):
    source = tmp_path / "view.py"
    source.write_text("from access import caller\ncaller.subject_for_user(u)\ncaller_for_user(u, sign_in='x')\n")
    assert called_names(source) >= USER_TO_CALLER
