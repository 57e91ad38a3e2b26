from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "mobkit_console.alerts"
    label = "alerts"
    verbose_name = "Alert rules and notifications"

    def ready(self) -> None:
        # A broken rules file stops the server naming the line (docs/alerts.md §1), as access.toml does.
        from mobkit_console.timeline.signals import realms_followed

        from .config import load_alert_rules_at_startup
        from .evaluator import alerts_tick_for_leader

        load_alert_rules_at_startup()
        realms_followed.connect(alerts_tick_for_leader, dispatch_uid="alerts-evaluate", weak=False)
