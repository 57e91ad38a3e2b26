from django.apps import AppConfig


class ExplainerConfig(AppConfig):
    name = "mobkit_console.explainer"
    label = "explainer"
    verbose_name = "Access explainer"
