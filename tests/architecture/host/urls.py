from django.urls import include, path

urlpatterns = [path("ops/", include("memory_panel.urls"))]
