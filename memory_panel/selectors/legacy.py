"""Legacy markdown memory files waiting for import, listed per (realm, identity) (docs/runtime-surfaces.md §3.1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_panel.store.legacy_markdown import LegacyFile, import_state, read_legacy_file
from memory_panel.store.realms import agent_memory_root, decode_path_segment
from memory_panel.visibility import scope_visible

if TYPE_CHECKING:
    from access.caller import Access


def legacy_markdown_files(*, access: Access) -> list[LegacyFile]:
    """Every markdown file under the agent-memory root the caller may read, by (realm, identity).

    Records are identity-scoped memory, so a file is listed only with ``agent.memory.read`` and
    ``agent.view`` on its identity, as for that identity's SQLite records.
    """
    root = agent_memory_root()
    if not root.is_dir():
        return []
    found: list[LegacyFile] = []
    for realm_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        realm = decode_path_segment(realm_dir.name)
        for path in sorted(realm_dir.iterdir()):
            state, stem = import_state(path.name)
            if state is None or not path.is_file():
                continue
            identity = decode_path_segment(stem)
            if not scope_visible(access, "identity", identity):
                continue
            found.append(read_legacy_file(path, realm, identity, state))
    return sorted(found, key=lambda f: (f.realm, f.identity, f.state))
