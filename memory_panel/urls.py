from django.urls import path

from memory_panel import views_ledger

urlpatterns: list = [
    path("memory/ledger/", views_ledger.ledger_page, name="memory-ledger"),
    path("memory/ledger/health/", views_ledger.ledger_health_fragment, name="memory-ledger-health"),
    path("memory/recall/", views_ledger.recall_page, name="memory-recall"),
    path("memory/legacy/", views_ledger.legacy_page, name="memory-legacy"),
]
