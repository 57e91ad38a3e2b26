"""access.toml postures the Memory panel tests and browser journeys run under (docs/access.md §2.6)."""

from __future__ import annotations

from pathlib import Path

ADMIN = "root@example.test"
READER = "reader@example.test"
REVIEWER = "reviewer@example.test"
NO_OPERATOR = "partial@example.test"
SCOPED = "scout@example.test"
NOBODY = "nobody@example.test"

_HEADER = f"""
enabled = true
admins = ["{ADMIN}"]

[groups.reviewers]
members = ["{REVIEWER}"]

[groups.readers]
members = ["{READER}", "{REVIEWER}"]
"""

POSTURES = {
    # Readers read every scope; only the reviewers group may review quarantine.
    "standard": _HEADER
    + f"""
[[rules]]
id = "readers-read"
groups = ["readers"]
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read", "operator.memory.read"]

[[rules]]
id = "reviewers-review"
groups = ["reviewers"]
actions = ["memory.quarantine.review"]

[[rules]]
id = "partial-reads-all-but-operator"
subjects = ["{NO_OPERATOR}"]
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read"]

[[rules]]
id = "scout-reads-one-identity"
subjects = ["{SCOPED}"]
actions = ["agent.view", "agent.memory.read"]
agents = ["identity:luka"]
""",
}


def write_posture(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "access.toml"
    path.write_text(POSTURES[name], encoding="utf-8")
    return path
