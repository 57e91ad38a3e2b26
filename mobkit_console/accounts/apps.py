from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "mobkit_console.accounts"
    label = "accounts"
    verbose_name = "Console accounts and API tokens"
