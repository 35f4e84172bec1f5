# The doctor-only image the cannenv DaemonSet runs (rendered by `cannenv fleet k8s-image`): a small
# Python base plus the cannenv wheel — no CANN, no torch, no driver: the pods read the node's own
# files read-only under /host. The validated matrix is cached at build time, so a pod's judgement
# never imports pydantic or YAML (a warm `cannenv doctor`, docs/performance.md).
FROM @BASE@
COPY @WHEEL@ /tmp/@WHEEL@
COPY wheels/ /tmp/wheels/
# A venv of its own: works on python:*-slim and on a distribution Python alike (Debian's has no pip
# in the system interpreter and refuses system-wide installs, PEP 668); needs only the venv module.
ENV CANNENV_CACHE_DIR=/opt/cannenv/cache PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1 \
    PATH=/opt/cannenv/venv/bin:$PATH
RUN python3 -m venv /opt/cannenv/venv \
    && /opt/cannenv/venv/bin/python -m pip install -q @PIP@ /tmp/@WHEEL@ \
    && rm -r /tmp/@WHEEL@ /tmp/wheels \
    && /opt/cannenv/venv/bin/python -c "from cannenv import matrix; print(matrix.load().digest)"
ENTRYPOINT ["cannenv", "fleet", "k8s-agent"]
