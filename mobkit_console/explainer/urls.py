from django.urls import path

from mobkit_console.explainer import views

urlpatterns = [
    path("console/access/", views.access_page, name="console-access"),
    path("console/access/explain.json", views.explain_json, name="console-access-explain"),
]
