"""Console settings. Every environment variable of the contract is read here and nowhere else."""

from __future__ import annotations

import logging.config
import os
import sys
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from mobkit_console.observability.logs import log_format, logging_config
from mobkit_console.origins import origin_parse
from memory_panel.replica_sources import ReplicaSourcesInvalid, replica_sources_parse
from mobkit_console.secret_key import installation_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


# Metrics, logs and traces (docs/serving.md §8). bin/serve sets PROMETHEUS_MULTIPROC_DIR for its
# workers unless METRICS_PORT=0: then each process times its requests and realm queries into files
# there, which `manage.py serve_metrics` sums. Logs: one JSON object a line or console text, by
# default console on a terminal; applied at once, since reading the settings below may log (the
# installation's signing key, made on first start), and again by Django. Traces only when an OTLP
# endpoint is named.
MOBKIT_METRICS_DIR = _env_path("PROMETHEUS_MULTIPROC_DIR")
try:
    LOG_FORMAT = log_format(os.environ.get("LOG_FORMAT"), stream=sys.stderr)
except ValueError as _error:
    raise ImproperlyConfigured(str(_error)) from None
LOGGING = logging_config(LOG_FORMAT)
logging.config.dictConfig(LOGGING)
MOBKIT_TRACING = bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())

# MobKit's own state: the console only ever reads from here (seed_demo being the explicit exception).
MOBKIT_PERSISTENT_STATE = (_env_path("MOBKIT_PERSISTENT_STATE") or Path(".mobkit/state")).absolute()
MOBKIT_AGENT_MEMORY_ROOT = (
    _env_path("MOBKIT_AGENT_MEMORY_ROOT") or MOBKIT_PERSISTENT_STATE / "agent-memory"
).absolute()
MOBKIT_ACCESS_CONFIG = _env_path("MOBKIT_ACCESS_CONFIG")
MOBKIT_INGEST_TOKEN = os.environ.get("MOBKIT_INGEST_TOKEN", "").strip() or None
MOBKIT_LEDGER_HEALTH_ENDPOINT = os.environ.get("MOBKIT_LEDGER_HEALTH_ENDPOINT", "").strip() or None

# Every query on a realm file is interrupted after this long (a clear error instead of a held worker).
MOBKIT_REALM_QUERY_TIMEOUT_MS = int(os.environ.get("MOBKIT_REALM_QUERY_TIMEOUT_MS", "2000"))
# The Records facets a counter cannot answer (a search) stop after this much CPU time and say so.
MOBKIT_FACETS_TIMEOUT_MS = int(os.environ.get("MOBKIT_FACETS_TIMEOUT_MS", "1000"))

# Threads per server process for pages and JSON-RPC (docs/serving.md §2): this many requests run at
# once, the rest wait their turn, which no time limit counts. Each keeps a console-database connection.
MOBKIT_HTTP_THREADS = int(os.environ.get("MOBKIT_HTTP_THREADS", "").strip() or 12)

# Most connections to realm files and the console's index files one process keeps open at once, the
# least recently used closed first (docs/serving.md §5); each is about three file descriptors.
MOBKIT_REALM_CONNECTIONS = int(os.environ.get("MOBKIT_REALM_CONNECTIONS", "").strip() or 64)

# One JSON-RPC request (a batch of up to 100 calls) runs calls for at most about this long; the
# calls after it is spent are answered with a request_budget_exhausted error without being run.
MOBKIT_RPC_REQUEST_BUDGET_MS = int(os.environ.get("MOBKIT_RPC_REQUEST_BUDGET_MS", "").strip() or 5000)

# The console's own index of realm ordering keys (memory_panel/store/realm_index.py): realms with
# fewer rows are read directly; it follows the realm (docs/realm-index.md §4, §6) rather than being
# rebuilt on a timer, unless a reconcile period is set.
MOBKIT_REALM_INDEX_MIN_ROWS = int(os.environ.get("MOBKIT_REALM_INDEX_MIN_ROWS", "20000"))
MOBKIT_REALM_DIRECT_MAX_ROWS = int(os.environ.get("MOBKIT_REALM_DIRECT_MAX_ROWS", "500000"))
MOBKIT_REALM_INDEX_RECONCILE_SECONDS = int(os.environ.get("MOBKIT_REALM_INDEX_RECONCILE_SECONDS", "0"))
MOBKIT_REALM_INDEX_USAGE_SECONDS = int(os.environ.get("MOBKIT_REALM_INDEX_USAGE_SECONDS", "30"))
MOBKIT_REALM_INDEX_BACKGROUND = True

CONSOLE_STATE_DIR = MOBKIT_PERSISTENT_STATE / "console"

# Other hosts' realms, followed as Litestream copies by manage.py follow_replicas (docs/replicas.md):
# label → replica URL. A bad value stops start-up with what is wrong, never a half-followed host.
try:
    MOBKIT_REPLICA_SOURCES = replica_sources_parse(os.environ.get("MOBKIT_REPLICA_SOURCES", ""))
except ReplicaSourcesInvalid as _error:
    raise ImproperlyConfigured(f"MOBKIT_REPLICA_SOURCES: {_error}") from None

DEBUG = _env_flag("DJANGO_DEBUG", False)
# Never the public development key outside DEBUG: without DJANGO_SECRET_KEY, a key generated once
# for this installation in the state directory (mode 0600), and a log line saying so.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "").strip() or (
    "django-insecure-mobkit-console-development-key-change-me-in-production"
    if DEBUG
    else installation_secret_key(CONSOLE_STATE_DIR)
)
ALLOWED_HOSTS = [
    host.strip()
    for host in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1").split(",")
    if host.strip()
]

# Pages that may open cookie-signed-in sockets, as full origins (https://console.example.com):
# behind a TLS proxy, the public origin. Empty: the origin the socket itself was served on.
MOBKIT_ALLOWED_ORIGINS = [
    origin.strip() for origin in os.environ.get("MOBKIT_ALLOWED_ORIGINS", "").split(",") if origin.strip()
]
for _origin in MOBKIT_ALLOWED_ORIGINS:
    if origin_parse(_origin) is None:
        raise ImproperlyConfigured(f"MOBKIT_ALLOWED_ORIGINS: {_origin!r} is not an origin like https://console.example.com")

INSTALLED_APPS = [
    "daphne",  # first, so runserver serves ASGI (HTTP and WebSocket)
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "csp",
    "channels",
    "mobkit_console.accounts",
    "access",
    "mobkit_console.rpc",
    "memory_panel",
    "mobkit_console.timeline",
    "mobkit_console.audit",
    "mobkit_console.explainer",
    "mobkit_console.observability",
    "mobkit_console.alerts",
    "mobkit_console.saved_views",
]

MIDDLEWARE = [
    # First: every response carries X-Request-ID and every log line of a request its id (docs/serving.md §8).
    "mobkit_console.observability.middleware.RequestObservabilityMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # The console's sync-only middlewares come last. Pages run on the WSGI handler, where order
    # costs nothing; the exports and the event stream run on the ASGI handler, which then runs every
    # middleware above in one thread pass instead of a thread hop each (docs/serving.md §2). Order is
    # safe: the bearer user replaces the session's after AuthenticationMiddleware, and CSRF reads
    # its flag in process_view, which runs after every __call__.
    "mobkit_console.accounts.middleware.CallerMiddleware",
    "mobkit_console.accounts.middleware.SignedInNoStoreMiddleware",
    "mobkit_console.audit.middleware.AuditActorMiddleware",
]

ROOT_URLCONF = "mobkit_console.urls"
ASGI_APPLICATION = "mobkit_console.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "mobkit_console.shell.console_layout",
                "mobkit_console.alerts.context.panel_alerts",
                "mobkit_console.saved_views.context.save_view_form",
            ],
        },
    },
]

# The console's own database (users, tokens, event log). Never a realm file.
_DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if not _DATABASE_URL:
    # SQLite creates the file but not its directory; without this a fresh checkout's first
    # `manage.py migrate` fails with "unable to open database file".
    CONSOLE_STATE_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {
    "default": dj_database_url.parse(
        _DATABASE_URL or f"sqlite:///{CONSOLE_STATE_DIR / 'console.sqlite3'}",
        conn_max_age=60,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default serves ingest, the realm follower and page reads from one file at once.
    # WAL lets readers run beside the writer; synchronous=NORMAL commits without an fsync each (a
    # commit survives a crash of the process, not of the machine: the log mirrors the runtime's
    # events and the follower's watermark commits with them). IMMEDIATE takes the write lock at
    # BEGIN, so two writers queue on the busy timeout instead of failing to upgrade a read lock.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
DATABASE_ROUTERS = ["memory_panel.store.realms.RealmRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "").strip() or None
if REDIS_URL:
    # The pub/sub layer, not channels_redis.core: in bench/timeline_fanout.py (100 sockets, two
    # daphnes, 2-core box) pub/sub carried 90 events/s at p50 35 ms / p99 99 ms, core 70 events/s at
    # p50 113 ms / p99 682 ms, neither losing a frame (with slower server code, core lost 10.8% once
    # its per-channel queues, capacity 100, filled). The timeline only broadcasts to a group and
    # needs no per-channel queues, which is what pub/sub leaves out.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Every server process follows the realm files itself (behind the watcher lease, so one at a time)
# unless this is off; then run `manage.py watch_realms` (with REDIS_URL) for live store events.
MOBKIT_TIMELINE_FOLLOW_REALMS = _env_flag("MOBKIT_TIMELINE_FOLLOW_REALMS", True)
MOBKIT_TIMELINE_FOLLOW_INTERVAL_S = 0.25
MOBKIT_TIMELINE_FOLLOW_LEASE_S = 15.0
# docs/history.md §1: how many days of a realm's history the follower puts on the timeline when it
# first sees the realm (0: none; the realm is followed from its current end).
MOBKIT_TIMELINE_BACKFILL_DAYS = int(os.environ.get("MOBKIT_TIMELINE_BACKFILL_DAYS", "").strip() or 30)

# Alert rules and their notifications (docs/alerts.md): evaluated by the watcher lease's holder.
MOBKIT_ALERTS_CONFIG = _env_path("MOBKIT_ALERTS_CONFIG")
MOBKIT_ALERTS_WEBHOOK_SECRET = os.environ.get("MOBKIT_ALERTS_WEBHOOK_SECRET", "").strip() or None
MOBKIT_ALERTS_CHECK_INTERVAL_S = float(os.environ.get("MOBKIT_ALERTS_CHECK_INTERVAL_S", "").strip() or 30)
MOBKIT_ALERTS_RETRY_BASE_S = float(os.environ.get("MOBKIT_ALERTS_RETRY_BASE_S", "").strip() or 5)
MOBKIT_ALERTS_MAX_ATTEMPTS = int(os.environ.get("MOBKIT_ALERTS_MAX_ATTEMPTS", "").strip() or 8)

# The event log is bounded by both: the oldest events go once either limit is passed (0: no limit).
MOBKIT_TIMELINE_MAX_EVENTS = int(os.environ.get("MOBKIT_TIMELINE_MAX_EVENTS", "").strip() or 100_000)
MOBKIT_TIMELINE_MAX_AGE_DAYS = int(os.environ.get("MOBKIT_TIMELINE_MAX_AGE_DAYS", "").strip() or 30)

# The access audit log (docs/audit-and-oidc.md): entries older than this many days are pruned in
# the background (0 keeps them all). Queued entries are written every MOBKIT_AUDIT_FLUSH_INTERVAL_S
# by a background thread (0: no thread; tests write them when an audit page is read).
MOBKIT_AUDIT_RETENTION_DAYS = int(os.environ.get("MOBKIT_AUDIT_RETENTION_DAYS", "").strip() or 90)
MOBKIT_AUDIT_FLUSH_INTERVAL_S = 0.25

# OpenID Connect (docs/audit-and-oidc.md §4-§6): with an issuer and an audience, JWT bearer tokens it
# signed are accepted wherever a console token is; with a client id and secret too, browsers may
# sign in through it. The subject claim names the access.toml subject; the groups claim, when set,
# names access.toml groups.
MOBKIT_OIDC_ISSUER = os.environ.get("MOBKIT_OIDC_ISSUER", "").strip() or None
MOBKIT_OIDC_AUDIENCE = os.environ.get("MOBKIT_OIDC_AUDIENCE", "").strip() or None
MOBKIT_OIDC_SUBJECT_CLAIM = os.environ.get("MOBKIT_OIDC_SUBJECT_CLAIM", "").strip() or "email"
MOBKIT_OIDC_GROUPS_CLAIM = os.environ.get("MOBKIT_OIDC_GROUPS_CLAIM", "").strip() or None
MOBKIT_OIDC_CLIENT_ID = os.environ.get("MOBKIT_OIDC_CLIENT_ID", "").strip() or None
MOBKIT_OIDC_CLIENT_SECRET = os.environ.get("MOBKIT_OIDC_CLIENT_SECRET", "").strip() or None
# An address the provider did not vouch for (email_verified true) is no subject, unless this is off:
# for providers that never send email_verified (docs/audit-and-oidc.md §4).
MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED = _env_flag("MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED", True)
# The discovery document or the JWKS is fetched again at most this long after the last fetch
# ended, good or failed: a token naming a key id the keys lack, or a failing issuer, waits it out.
MOBKIT_OIDC_FETCH_COOLDOWN_S = 30.0
# The JWKS is read again in the background once it is this old, so a withdrawn key stops verifying.
MOBKIT_OIDC_KEYS_MAX_AGE_S = 300.0

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    # Answers only the OIDC callback, and only when the issuer and the client are configured.
    "mobkit_console.accounts.oidc_browser.ConsoleOIDCBackend",
]
# mozilla-django-oidc: the authorization-code flow with PKCE (S256); endpoints come from discovery.
OIDC_USE_PKCE = True
# The scopes a browser sign-in asks for, space-separated; "openid" is always among them. A provider
# that releases groups under a scope of its own (often "groups") needs it here (docs/audit-and-oidc.md §6).
_OIDC_SCOPES = os.environ.get("MOBKIT_OIDC_SCOPES", "").split() or ["openid", "email", "profile"]
OIDC_RP_SCOPES = " ".join(["openid", *(scope for scope in _OIDC_SCOPES if scope != "openid")])
OIDC_RP_SIGN_ALGO = "RS256"
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc_authentication_callback"
LOGIN_REDIRECT_URL_FAILURE = "/console/login/?sign_in=failed"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "console-shell"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, compressed names with far-future caching after `collectstatic` (bin/demo and the
    # README's steps run it, the test suite once per session); plain names, never a 500, before it.
    "staticfiles": {"BACKEND": "mobkit_console.staticfiles.ConsoleStaticFilesStorage"},
}
# Tests and runserver serve static files straight from the finders, without a collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Record text is untrusted (it may be prompt injection): nothing inline, nothing evaluated.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Off by default so `bin/demo` can sign in over plain http on localhost; set
# DJANGO_SECURE_COOKIES=1 whenever the console is served behind TLS (README, check --deploy).
SESSION_COOKIE_SECURE = _env_flag("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# HSTS and the HTTPS redirect belong to the TLS-terminating proxy in front of daphne (README).
# X-Forwarded-Proto says the page was served over https only when such a proxy sets it: any
# client can send the header, so it is trusted only when MOBKIT_BEHIND_PROXY says there is one.
MOBKIT_BEHIND_PROXY = _env_flag("MOBKIT_BEHIND_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if MOBKIT_BEHIND_PROXY else None

# JSON-RPC and event-ingest bodies larger than this are refused with a clear error.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
