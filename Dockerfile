# stud-server: one gateway node. Built with the same commands CI runs (`.ci/run`): a venv,
# `pip install -e` of this repository, then `stud-server`, which migrates the database and
# serves. docker-compose.yml runs two of these nodes on PostgreSQL and Redis.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH \
    STUD_PORT=8000 \
    STUD_DATA_DIR=/data

WORKDIR /app

# Only what the install and the server read: the migrations sit outside the packages, next to
# server/ (server/db/migrate.py finds them there), which an editable install keeps in place.
COPY pyproject.toml README.md LICENSE alembic.ini ./
COPY migrations/ migrations/
COPY engine/ engine/
COPY server/ server/
COPY clients/python/ clients/python/

RUN python3 -m venv /opt/venv
RUN python -m pip install --quiet --upgrade pip
RUN python -m pip install --quiet -e .

# A user of its own; /data, the data directory (owner-only), holds the SQLite database and
# its deck key when DATABASE_URL is left unset (mount a volume there to keep them). In
# production hand the key over as a secret instead (STUD_DECK_KEY or STUD_DECK_KEY_FILE:
# docs/operators.md, "The deck key").
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin stud \
    && mkdir -m 0700 /data && chown stud:stud /data
USER 10001:10001

EXPOSE 8000
# Liveness: GET /healthz on this container's STUD_PORT, with the standard library only.
# (Set the port with STUD_PORT rather than --port so that this check follows it.)
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('STUD_PORT', '8000') + '/healthz', timeout=4); sys.exit(0 if r.status == 200 else 1)"]

ENTRYPOINT ["stud-server"]
CMD ["--host", "0.0.0.0"]
