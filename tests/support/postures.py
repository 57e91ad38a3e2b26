"""Every access.toml text the suite runs under, named by posture, with the subjects it names.

MobKit's illustrative postures (docs/access.md §2.6) are ``POSTURES``; the others are the
console's own test postures, each named for what it grants. ``BY_NAME`` holds them all, so a
fixture can take a posture by name. Bad-input texts a test feeds the parser stay in that test's
table: they are inputs, not postures.
"""

from __future__ import annotations

import os
from pathlib import Path

# Subjects (what admins, subjects and group members match).
ROOT = "root@example.test"
REVIEWER = "reviewer@example.test"
READER = "reader@example.test"
USER = "user@example.test"
NO_OPERATOR = "partial@example.test"
SCOUT_READER = "scout@example.test"
NOBODY = "nobody@example.test"
AUDITOR = "auditor@example.test"

# Agents.
SCOUT = "identity:scout"
LUKA = "identity:luka"
LEAD = "identity:lead"

ADMIN_ONLY_HEADER = f"""
enabled = true
admins = ["{ROOT}"]
"""
HEADER = (
    ADMIN_ONLY_HEADER
    + f"""
[groups.reviewers]
description = "Quarantine reviewers"
members = ["{REVIEWER}"]
"""
)
READS = """
[[rules]]
id = "everyone-reads"
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read", "operator.memory.read"]
"""
REVIEWS = """
[[rules]]
id = "reviewers-review"
description = "Only reviewers see the quarantine queue"
groups = ["reviewers"]
actions = ["memory.*"]
"""
SCOUT_ONLY_RULE = f"""
[[rules]]
id = "scout-only"
subjects = ["*"]
actions = ["agent.view", "agent.memory.read"]
agents = ["{SCOUT}"]
"""

# docs/access.md §2.6
POSTURES = {
    "reader": HEADER + READS,
    "partial": HEADER
    + """
[[rules]]
id = "everyone-reads-but-operator"
actions = ["agent.view", "mob.observe", "agent.memory.read", "mob.memory.read"]
""",
    "scoped": HEADER + SCOUT_ONLY_RULE,
    "none": HEADER
    + """
[[rules]]
id = "see-agents"
actions = ["agent.view", "mob.observe"]

[[rules]]
id = "no-memory"
effect = "deny"
actions = ["agent.memory.read", "mob.memory.read", "operator.memory.read", "memory.quarantine.review"]
""",
    "reviewer": HEADER + READS + REVIEWS,
}

# Review without any read grant: the queue answers, but empty (docs/wire-contract.md §1.2 (c)).
BARE_REVIEWER = HEADER + REVIEWS
# Everyone reads every scope; the admin reads everything anyway.
ADMIN_READS = HEADER + READS
# Reads on identity:scout alone, no unscoped read; no groups.
SCOUT_ONLY = ADMIN_ONLY_HEADER + SCOUT_ONLY_RULE

# Readers read, reviewers review, and one subject who is no admin holds access.admin (the audit log's readers).
AUDITORS = (
    HEADER
    + READS
    + REVIEWS
    + f"""
[[rules]]
id = "auditor-administers"
subjects = ["{AUDITOR}"]
actions = ["access.admin"]
"""
)

# The RPC and gate tables' postures, each with the subject that calls under it ("open": no access.toml).
CALLERS: dict[str, tuple[str | None, str]] = {
    "open": (None, USER),
    **{name: (text, REVIEWER if name == "reviewer" else USER) for name, text in POSTURES.items()},
    "bare_reviewer": (BARE_REVIEWER, REVIEWER),
    "admin": (ADMIN_READS, ROOT),
}

# The Memory panel pages and browser journeys: readers read every scope, reviewers review, one
# subject reads all but operator memory and one reads identity:luka alone.
STANDARD = f"""
enabled = true
admins = ["{ROOT}"]

[groups.reviewers]
members = ["{REVIEWER}"]

[groups.readers]
members = ["{READER}", "{REVIEWER}"]

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
subjects = ["{SCOUT_READER}"]
actions = ["agent.view", "agent.memory.read"]
agents = ["{LUKA}"]
"""

# Rules scoped by role or label, which never match without a roster (docs/access.md §2.1).
ROLE_AND_LABEL_SCOPED = (
    HEADER
    + """
[[rules]]
id = "scouts"
actions = ["agent.view"]
roles = ["*"]

[[rules]]
id = "payments"
actions = ["agent.memory.read"]
match_labels = { org = "payments" }
"""
)

# An admin and nothing granted to anyone else.
NOTHING_GRANTED = 'enabled = true\nadmins = ["root@example.com"]\n'

# reader@example.com reads identity:luka alone (the realm index's one-agent walks).
LUKA_ONLY_READER = """
enabled = true
admins = ["root@example.com"]

[[rules]]
id = "one-agent-reader"
subjects = ["reader@example.com"]
actions = ["agent.view", "agent.memory.read"]
agents = ["identity:luka"]
"""

# reader@example.test reads two agents and every mob.
TWO_AGENTS_AND_MOBS = f"""
enabled = true
admins = ["{ROOT}"]

[[rules]]
id = "two-agents-and-mobs"
subjects = ["{READER}"]
actions = ["agent.view", "agent.memory.read", "mob.memory.read"]
agents = ["identity:luka", "identity:router"]

[[rules]]
id = "mobs"
subjects = ["{READER}"]
actions = ["mob.memory.read"]
"""

# The timeline's audience: alice administers; bob sees one agent and reads its memory; carol sees
# every agent (so _system) but reads no memory; dave sees every agent and reads mob memory.
TIMELINE_AUDIENCE = """
enabled = true
admins = ["alice@example.test"]

[[rules]]
id = "bob-luka"
subjects = ["bob@example.test"]
actions = ["agent.view", "agent.memory.read"]
agents = ["identity:luka"]

[[rules]]
id = "carol-view"
subjects = ["carol@example.test"]
actions = ["agent.view"]

[[rules]]
id = "dave-mob"
subjects = ["dave@example.test"]
actions = ["agent.view", "mob.memory.read"]
"""

# star views every agent (agents = ["*"]), router one agent; neither reads memory.
STAR_AND_ONE_AGENT_VIEWERS = f"""
enabled = true
admins = ["{ROOT}"]

[[rules]]
id = "star-viewer"
subjects = ["star@example.test"]
actions = ["agent.view"]
agents = ["*"]

[[rules]]
id = "router-viewer"
subjects = ["router@example.test"]
actions = ["agent.view"]
agents = ["identity:router"]
"""

# reader@example.test sees every agent and reads scout's memory alone; a deny names lead. A save
# cut before scout-only's `agents` line would leave it unscoped and the deny gone.
SCOUT_READ_LEAD_DENIED = f"""
enabled = true
admins = ["{ROOT}"]

[[rules]]
id = "view-all"
subjects = ["*"]
actions = ["agent.view"]

[[rules]]
id = "scout-only"
subjects = ["{READER}"]
actions = ["agent.memory.read"]
agents = ["{SCOUT}"]

[[rules]]
id = "never-lead"
effect = "deny"
subjects = ["{READER}"]
actions = ["agent.memory.read"]
agents = ["{LEAD}"]
"""

# Gates that only identity-provider groups open or close: nobody is a member in the file, so a
# group counts only when a JWT or a browser sign-in through the issuer vouches for it.
# carol reads every agent unless vouched into denied-ana; dan reads ana only when vouched into ana-readers.
IDP_GROUP_GATES = f"""
enabled = true
admins = ["{ROOT}"]

[groups.denied-ana]
description = "Vouched for by the identity provider alone"
members = []

[groups.ana-readers]
description = "Vouched for by the identity provider alone"
members = []

[[rules]]
id = "carol-reads-all"
subjects = ["carol@example.test"]
actions = ["agent.view", "agent.memory.read"]

[[rules]]
id = "no-ana-for-denied-ana"
effect = "deny"
groups = ["denied-ana"]
actions = ["agent.memory.read"]
agents = ["identity:ana"]

[[rules]]
id = "ana-readers-read-ana"
groups = ["ana-readers"]
actions = ["agent.view", "agent.memory.read"]
agents = ["identity:ana"]
"""


def everyone_may(*actions: str) -> str:
    """A posture granting every subject ``actions`` on everything."""
    quoted = ", ".join(f'"{action}"' for action in actions)
    return f'enabled = true\nadmins = ["{ROOT}"]\n\n[[rules]]\nid = "everyone"\nactions = [{quoted}]\n'


BY_NAME: dict[str, str] = {
    **POSTURES,
    "bare_reviewer": BARE_REVIEWER,
    "admin": ADMIN_READS,
    "auditors": AUDITORS,
    "scout_only": SCOUT_ONLY,
    "standard": STANDARD,
    "role_and_label_scoped": ROLE_AND_LABEL_SCOPED,
    "nothing_granted": NOTHING_GRANTED,
    "luka_only_reader": LUKA_ONLY_READER,
    "two_agents_and_mobs": TWO_AGENTS_AND_MOBS,
    "timeline_audience": TIMELINE_AUDIENCE,
    "star_and_one_agent_viewers": STAR_AND_ONE_AGENT_VIEWERS,
    "scout_read_lead_denied": SCOUT_READ_LEAD_DENIED,
    "idp_group_gates": IDP_GROUP_GATES,
}


def use_caller_posture(settings, directory: Path, name: str) -> str:
    """Point the console at ``CALLERS[name]``'s access.toml (none for "open"); its caller's subject."""
    text, subject = CALLERS[name]
    settings.MOBKIT_ACCESS_CONFIG = None if text is None else write_access_toml(directory / f"access-{name}.toml", text)
    return subject


def write_access_toml(path: Path, text: str, *, atomic: bool = False) -> Path:
    """Write an access.toml the way an operator would, so the console's file watcher sees it.

    ``atomic``: to a scratch file renamed over the config, as editors do (a new inode). Otherwise
    in place; a rewrite then moves the mtime on, so the edit is seen even within one filesystem tick.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if atomic:
        scratch = path.with_suffix(".tmp")
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, path)
        return path
    existed = path.exists()
    path.write_text(text, encoding="utf-8")
    if existed:
        bump_mtime(path)
    return path


def bump_mtime(path: Path) -> None:
    """Make an edit visible to the mtime/size/inode check even within one filesystem tick."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
