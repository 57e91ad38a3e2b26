"""A Django project that is not the console: it installs memory_panel the way README says."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = Path(__import__("os").environ["HOST_STATE"])

SECRET_KEY = "host-project-test-key"
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "django_htmx",
    "access",
    "memory_panel",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "access.middleware.SessionCallerMiddleware",
]
ROOT_URLCONF = "tests.architecture.host.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(STATE / "host.sqlite3")}}
DATABASE_ROUTERS = ["memory_panel.store.realms.RealmRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
STATIC_URL = "/static/"
USE_TZ = True
MOBKIT_PERSISTENT_STATE = STATE
