"""Unmanaged models mirroring MobKit's realm tables (docs/store-format.md §1.3), column for column.

The runtime owns these tables: ``managed = False`` everywhere, and the router refuses migrations
on realm aliases. Read them with ``.using(realm_alias(name))``. JSON columns stay TEXT here;
``memory_panel.store.records`` decodes them, tolerating hand-edited garbage.
"""

from django.db import models


class Record(models.Model):
    memory_id = models.TextField(primary_key=True)
    scope_kind = models.TextField()
    scope_key = models.TextField()
    kind = models.TextField()
    title = models.TextField()
    description = models.TextField(default="")
    body = models.TextField()
    tags = models.TextField(default="[]")
    provenance = models.TextField()
    trust = models.TextField()
    status_kind = models.TextField()
    status_detail = models.TextField(null=True)
    supersedes = models.TextField(null=True)
    derived_from = models.TextField(default="[]")
    working_set_rank = models.IntegerField(null=True)
    rank_set_at_ms = models.BigIntegerField(null=True)
    content_hash = models.TextField()
    created_at_ms = models.BigIntegerField()
    updated_at_ms = models.BigIntegerField()
    usage_stats = models.TextField(default="{}")
    tombstoned_at_ms = models.BigIntegerField(null=True)
    # Current format only; older files lack the column (selectors leave it out of their SELECT).
    ever_quarantined = models.IntegerField(default=0)

    class Meta:
        managed = False
        db_table = "records"


class Proposal(models.Model):
    proposal_id = models.TextField(primary_key=True)
    scope_kind = models.TextField()
    scope_key = models.TextField()
    record = models.TextField()
    author = models.TextField()
    status = models.TextField(default="pending")
    created_at_ms = models.BigIntegerField()
    taint = models.TextField(null=True)

    class Meta:
        managed = False
        db_table = "proposals"


class Audit(models.Model):
    audit_id = models.BigAutoField(primary_key=True)
    stage_token = models.TextField()
    op_index = models.IntegerField()
    op_kind = models.TextField()
    memory_id = models.TextField(null=True)
    detail = models.TextField()
    applied_at_ms = models.BigIntegerField()

    class Meta:
        managed = False
        db_table = "audit"


class Stage(models.Model):
    token = models.TextField(primary_key=True)
    batch = models.TextField()
    created_at_ms = models.BigIntegerField()

    class Meta:
        managed = False
        db_table = "stage"


class Injection(models.Model):
    injection_id = models.BigAutoField(primary_key=True)
    record_id = models.TextField()
    identity = models.TextField()
    session_key = models.TextField(null=True)
    surface = models.TextField()
    at_ms = models.BigIntegerField()

    class Meta:
        managed = False
        db_table = "injections"


class PendingHarvest(models.Model):
    # docs/store-format.md §1.3: the key is (identity, retired_at_ms).
    pk = models.CompositePrimaryKey("identity", "retired_at_ms")
    identity = models.TextField()
    session_key = models.TextField(null=True)
    cause = models.TextField()
    retired_at_ms = models.BigIntegerField()
    status = models.TextField(default="pending")

    class Meta:
        managed = False
        db_table = "pending_harvests"


class PendingPromotion(models.Model):
    pending_id = models.TextField(primary_key=True)
    stage_token = models.TextField()  # a commit capability: never leaves the server
    record_id = models.TextField()
    scope_kind = models.TextField()
    scope_key = models.TextField()
    rationale = models.TextField(null=True)
    status = models.TextField(default="pending")
    created_at_ms = models.BigIntegerField()
    resolved_at_ms = models.BigIntegerField(null=True)

    class Meta:
        managed = False
        db_table = "pending_promotions"


class DreamRun(models.Model):
    run_id = models.TextField(primary_key=True)
    partition_label = models.TextField(default="realm")
    started_at_ms = models.BigIntegerField()
    completed_at_ms = models.BigIntegerField()
    ops_committed = models.IntegerField()
    detail = models.TextField()

    class Meta:
        managed = False
        db_table = "dream_runs"


class DreamAuditVerdict(models.Model):
    pk = models.CompositePrimaryKey("run_id", "record_id")  # docs/store-format.md §1.3
    run_id = models.TextField()
    record_id = models.TextField()
    verdict = models.TextField()
    rationale = models.TextField()
    created_at_ms = models.BigIntegerField()
    resolved_at_ms = models.BigIntegerField(null=True)
    resolution = models.TextField(null=True)

    class Meta:
        managed = False
        db_table = "dream_audit_verdicts"


class SchemaLedger(models.Model):
    domain = models.TextField(primary_key=True)
    version = models.IntegerField()

    class Meta:
        managed = False
        db_table = "meerkat_schema"
