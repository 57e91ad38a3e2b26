"""The panel's pages. The project includes them under ``console/`` (``mobkit_console/urls.py``)."""

from django.urls import path

from memory_panel.views import changes, export, facets, knowledge, ledger, memory, pipeline, realm_choice, replicas, tiles

urlpatterns: list = [
    path("memory/", memory.holdings, name="memory-holdings"),
    path("memory/holdings/<str:tile>/", tiles.tile_evidence, name="memory-tile"),
    path("memory/records/", memory.records, name="memory-records"),
    path("memory/records/facets.json", facets.records_facets_json, name="memory-records-facets-json"),
    # No trailing slash: a record whose id is "facets" keeps its page (``records/<id>/`` below).
    path("memory/records/facets.html", facets.records_facets, name="memory-records-facets"),
    path("memory/records.csv", export.records_csv, name="memory-records-csv"),
    path("memory/records.ndjson", export.records_ndjson, name="memory-records-ndjson"),
    # MobKit ids are free text (steward-declared ids, hand edits): a "/" must not break the route.
    path("memory/records/<path:memory_id>/", memory.record_detail, name="memory-record"),
    path("memory/changes/", changes.changes, name="memory-changes"),
    path("memory/changes.ndjson", changes.changes_ndjson, name="memory-changes-ndjson"),
    path("memory/changes.csv", changes.changes_csv, name="memory-changes-csv"),
    path("memory/quarantine/", memory.quarantine, name="memory-quarantine"),
    path("memory/dreams/", memory.dreams, name="memory-dreams"),
    path("memory/pipeline/", pipeline.pipeline_page, name="memory-pipeline"),
    path("memory/knowledge/", knowledge.knowledge_page, name="memory-knowledge"),
    path("memory/ledger/", ledger.ledger, name="memory-ledger"),
    path("memory/ledger/health/", ledger.ledger_health_fragment, name="memory-ledger-health"),
    path("memory/recall/", ledger.recall, name="memory-recall"),
    path("memory/legacy/", ledger.legacy, name="memory-legacy"),
    path("memory/realm/", realm_choice.realm_switch, name="memory-realm"),
    path("memory/realm/options/", realm_choice.realm_options, name="memory-realm-options"),
    path("replicas/health", replicas.replicas_health, name="replicas-health"),
]
