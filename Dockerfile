# One image for web, worker, beat and Flower (docker-compose.yml picks the command).
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    MEDIA_ROOT=/data/media \
    INGEST_STAGING_DIR=/data/staging \
    SANDBOX_PATH=/data/sandbox

# The app runs as an unprivileged user; it may write only to /data and nothing in /app.
RUN groupadd --system --gid 10001 stashcast \
    && useradd --system --uid 10001 --gid stashcast --create-home --home-dir /home/stashcast \
        --shell /usr/sbin/nologin stashcast \
    && mkdir -p /data/media /data/staging /data/sandbox \
    && chown -R stashcast:stashcast /data

WORKDIR /app
COPY requirements/base.txt requirements/base.txt
RUN pip install -r requirements/base.txt

COPY . .
RUN mkdir -p staticfiles && chown stashcast:stashcast staticfiles

USER stashcast

# Static files are collected once, at build time. These values exist for this step
# only: the real ones come from the environment (.env) when a container starts.
RUN DJANGO_SECRET_KEY=build-only-not-used-at-run-time-0123456789abcdefghijklmnop \
    DJANGO_ALLOWED_HOSTS=localhost \
    STASHCAST_SESSION_KEYS=MDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA= \
    DATABASE_URL=postgres://build@localhost:5432/build \
    REDIS_URL=redis://localhost:6379/0 \
    python manage.py collectstatic --no-input -v 0

EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
