"""Each event's visibility key, for the timeline's count (docs/timeline-live.md §6)."""

import django.db.models.deletion
from django.db import migrations, models

BACKFILL_CHUNK = 500


def backfill_visibility_keys(apps, schema_editor) -> None:
    """The events already in the log get their keys, so the count holds them from the first page."""
    from mobkit_console.timeline.services import visibility_key_ids
    from mobkit_console.timeline.visibility import visibility_key

    event_model = apps.get_model("timeline", "TimelineEvent")
    key_model = apps.get_model("timeline", "EventVisibilityKey")
    last = 0
    events = event_model.objects.order_by("seq").only("seq", "identity", "data")
    while rows := list(events.filter(seq__gt=last)[:BACKFILL_CHUNK]):
        keys = {row.seq: visibility_key(row.identity, row.data) for row in rows}
        ids = visibility_key_ids(keys.values(), model=key_model)
        for row in rows:
            row.visibility_key_id = ids[keys[row.seq]]
        event_model.objects.bulk_update(rows, ["visibility_key"])
        last = rows[-1].seq


class Migration(migrations.Migration):

    dependencies = [
        ('timeline', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='EventVisibilityKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('digest', models.CharField(max_length=64, unique=True)),
                ('identity', models.TextField()),
                ('scope_kind', models.TextField(null=True)),
                ('scope_key', models.TextField(null=True)),
                ('last_used_ms', models.BigIntegerField()),
            ],
        ),
        migrations.AddField(
            model_name='timelineevent',
            name='visibility_key',
            field=models.ForeignKey(db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='timeline.eventvisibilitykey'),
        ),
        migrations.AddIndex(
            model_name='timelineevent',
            index=models.Index(fields=['visibility_key', 'seq'], name='timeline_event_key_seq'),
        ),
        migrations.AddIndex(
            model_name='timelineevent',
            index=models.Index(fields=['visibility_key', 'event_type', 'seq'], name='timeline_event_key_type_seq'),
        ),
        migrations.RunPython(backfill_visibility_keys, migrations.RunPython.noop, elidable=True),
    ]
