# The doctor-only image the cannenv DaemonSet runs (rendered by `cannenv fleet k8s-image`): a small
# Python base plus the cannenv wheel — no CANN, no torch, no driver: the pods read the node's own
# files read-only under /host. The validated matrix is cached at build time, so a pod's judgement
# never imports pydantic or YAML (a warm `cannenv doctor`, docs/performance.md).
FROM @BASE@
COPY @WHEEL@ /tmp/@WHEEL@
ENV CANNENV_CACHE_DIR=/opt/cannenv/cache PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1
RUN python3 -m pip install /tmp/@WHEEL@ \
    && rm /tmp/@WHEEL@ \
    && python3 -c "from cannenv import matrix; print(matrix.load().digest)"
ENTRYPOINT ["cannenv", "fleet", "k8s-agent"]
