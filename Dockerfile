# One image per game service and one for the gateway, all from this file:
#   python -m deploy.images            (make images; BASE_IMAGE=local for the offline base)
# Every image shares the layers up to the last COPY; only the labels, ports and the
# module to run differ, and the gateway's adds Envoy (its last stage; deploy/images.py
# builds --target service or gateway). The base needs Python 3.11 with venv: python:3.11-slim, or the
# Debian image scripts/base-image.sh makes (python3 from bookworm). The web app's image
# (nginx, on the same base) is deploy/web/Dockerfile's.
ARG BASE_IMAGE=python:3.11-slim

# --- build: wheels into a virtualenv, protobuf code generated, everything compiled ----
FROM ${BASE_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
# Downloaded on the host by deploy/images.py: the build never reaches a package index.
COPY wheels/ /wheels/
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-index --find-links /wheels -r /wheels/runtime.txt \
 && python3 -m venv /opt/tools \
 && /opt/tools/bin/pip install --no-index --find-links /wheels -r /wheels/tools.txt \
 && /opt/tools/bin/pip install --no-index --find-links /wheels --target /opt/envoy \
      -r /wheels/gateway.txt
COPY protos/ /src/protos/
RUN mkdir -p /app/gen \
 && cd /src/protos \
 && /opt/tools/bin/python -m grpc_tools.protoc -I . --python_out=/app/gen \
      --grpc_python_out=/app/gen --include_imports --include_source_info \
      --descriptor_set_out=/app/gen/tabletop.binpb $(find . -name '*.proto' | sort)
COPY services/ /app/services/
COPY gateway/ /app/gateway/
# The command line's board renderers: the services draw GetGame's board_text with them.
COPY client/__init__.py /app/client/__init__.py
COPY client/render/ /app/client/render/
COPY deploy/healthcheck.py /app/healthcheck.py
RUN find /app -name '__pycache__' -prune -exec rm -rf {} + \
 && /opt/venv/bin/python -m compileall -q /app

# --- runtime: the same base, no compiler, no build tools, not root ------------------
FROM ${BASE_IMAGE} AS service
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONPATH=/app:/app/gen \
    PATH=/opt/venv/bin:$PATH \
    TABLETOP_LOG_FORMAT=json
# A fixed numeric user, so Kubernetes can check runAsNonRoot; it owns only the store folder.
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
RUN echo 'tabletop:x:10001:10001:tabletop:/app:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'tabletop:x:10001:' >> /etc/group \
 && install -d -o 10001 -g 10001 -m 0750 /app/data
WORKDIR /app
USER 10001:10001

# What makes one image differ from the next (all from services/registry.py).
ARG MODULE
ARG SERVICE
ARG PORT
ARG METRICS_PORT
ARG VERSION=0.0.0
ENV TABLETOP_MODULE=${MODULE} \
    TABLETOP_PORT=${PORT} \
    TABLETOP_METRICS_PORT=${METRICS_PORT}
LABEL org.opencontainers.image.title="tabletop-${SERVICE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="Tabletop ${SERVICE}: gRPC on ${PORT}, /metrics on ${METRICS_PORT}"
EXPOSE ${PORT} ${METRICS_PORT}
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "/app/healthcheck.py"]
# exec: the Python process is PID 1 and gets SIGTERM itself (it drains, then stops).
ENTRYPOINT ["/bin/sh", "-c", "exec python -m \"$TABLETOP_MODULE\" \"$@\"", "--"]

# --- the gateway: the same image and Envoy, its data path (gateway/proxy.py) ---------
FROM service AS gateway
COPY --from=build /opt/envoy/envoy/_bin/envoy /opt/envoy/envoy
ENV TABLETOP_ENVOY_BINARY=/opt/envoy/envoy
