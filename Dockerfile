# syntax=docker/dockerfile:1
# The console's image (docs/deploy.md §1): bin/serve on a virtual environment built here, static
# files collected here, run by an unprivileged user that may write only the state volume and /tmp.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
# The replicas extra lets follow_replicas list S3 and SFTP sources (docs/replicas.md §2).
ARG EXTRAS=replicas
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /app
# The dependencies alone first, so a change to the code reuses this layer.
COPY pyproject.toml ./
RUN python3 -m venv .venv \
 && .venv/bin/pip install --editable ".[${EXTRAS}]"
COPY manage.py ./
COPY bin ./bin
COPY access ./access
COPY memory_panel ./memory_panel
COPY mobkit_console ./mobkit_console
COPY templates ./templates
COPY static ./static
# The same editable install bin/lib/venv.sh makes, and the stamp it checks, so nothing is
# installed at start. The throwaway key and state exist for collectstatic alone: settings need both.
RUN .venv/bin/pip install --no-deps --editable . \
 && DJANGO_SECRET_KEY=collectstatic-only MOBKIT_PERSISTENT_STATE=/tmp/collectstatic-state \
    .venv/bin/python manage.py collectstatic --noinput -v0 \
 && rm -rf /tmp/collectstatic-state \
 && .venv/bin/python -m compileall -q access memory_panel mobkit_console \
 && touch .venv/.mobkit-console-installed

FROM ${BASE_IMAGE}
ENV PATH=/app/.venv/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOST=0.0.0.0 \
    PORT=8000 \
    MOBKIT_PERSISTENT_STATE=/var/lib/mobkit-console \
    MOBKIT_COLLECTSTATIC=0
RUN groupadd --gid 10001 mobkit \
 && useradd --uid 10001 --gid mobkit --create-home --home-dir /home/mobkit --shell /usr/sbin/nologin mobkit \
 && install -d -o mobkit -g mobkit -m 0750 /var/lib/mobkit-console
WORKDIR /app
# Owned by root: the console's user reads the application and cannot change it.
COPY --from=build /app /app
USER 10001:10001
EXPOSE 8000 9464
# Python rather than curl, which the slim base does not have; liveness only (docs/deploy.md §1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"]
CMD ["bin/serve"]
