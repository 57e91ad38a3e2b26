from django.urls import include, path

urlpatterns = [
    path("console/", include("memory_panel.urls")),
]
