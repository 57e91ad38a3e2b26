from django.apps import AppConfig
from django.conf import settings


class ObservabilityConfig(AppConfig):
    name = "mobkit_console.observability"
    label = "observability"

    def ready(self) -> None:
        from mobkit_console.observability import receivers, tracing  # noqa: F401 - connects the metrics' receivers

        if settings.MOBKIT_TRACING:
            tracing.tracing_start()
