from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "mobkit_console.access"
    label = "access"
    verbose_name = "MobKit access control"
