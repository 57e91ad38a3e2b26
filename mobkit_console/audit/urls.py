from django.urls import path

from mobkit_console.audit import views

urlpatterns = [
    path("console/audit/", views.audit_page, name="console-audit"),
    path("console/audit.ndjson", views.audit_ndjson, name="console-audit-ndjson"),
]
