from django.urls import path

from mobkit_console.saved_views import views

urlpatterns = [
    path("console/views/", views.saved_views_page, name="saved-views"),
    path("console/views/save", views.save, name="saved-views-save"),
    path("console/views/<int:view_id>/", views.open_view, name="saved-view"),
    path("console/views/<int:view_id>/delete", views.delete, name="saved-view-delete"),
    path("console/views/<int:view_id>/share", views.share, name="saved-view-share"),
]
