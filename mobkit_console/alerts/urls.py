from django.urls import path

from mobkit_console.alerts import views

urlpatterns = [
    path("console/alerts/", views.alerts_page, name="console-alerts"),
    path("console/alerts/test/", views.alerts_test, name="console-alerts-test"),
]
