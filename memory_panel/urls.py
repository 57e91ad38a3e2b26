from django.urls import path

from memory_panel import views, views_ledger

urlpatterns: list = [
    path("memory/", views.holdings, name="memory-holdings"),
    path("memory/records/", views.records, name="memory-records"),
    # MobKit ids are free text (steward-declared ids, hand edits): a "/" must not break the route.
    path("memory/records/<path:memory_id>/", views.record_detail, name="memory-record"),
    path("memory/quarantine/", views.quarantine, name="memory-quarantine"),
    path("memory/dreams/", views.dreams, name="memory-dreams"),
    path("memory/ledger/", views_ledger.ledger_page, name="memory-ledger"),
    path("memory/ledger/health/", views_ledger.ledger_health_fragment, name="memory-ledger-health"),
    path("memory/recall/", views_ledger.recall_page, name="memory-recall"),
    path("memory/legacy/", views_ledger.legacy_page, name="memory-legacy"),
]
