#!/usr/bin/env bash
# Prepare a real Docker engine and a registry-free base image for cannenv's `docker` tests.
#
# Idempotent: does nothing that is already done.
#   1. starts dockerd (no bridge, no iptables: builds and runs use host or no networking) unless an
#      engine already answers;
#   2. makes the local base image cannenv-test/debian:bookworm with debootstrap + `docker import`
#      (no registry is reachable from our machines) unless it already exists.
#
# Needs root, Debian's docker.io and debootstrap packages, and Debian's mirror (for debootstrap only).
# Environment: CANNENV_TEST_BASE_IMAGE (default cannenv-test/debian:bookworm),
#              DEBIAN_MIRROR (default http://deb.debian.org/debian),
#              DOCKERD_LOG (default /tmp/cannenv-dockerd.log).
set -euo pipefail

BASE_IMAGE="${CANNENV_TEST_BASE_IMAGE:-cannenv-test/debian:bookworm}"
LOG="${DOCKERD_LOG:-/tmp/cannenv-dockerd.log}"
# Python + venv (ensurepip) are all the test image needs; passwd gives useradd/groupadd.
INCLUDE="python3,python3-venv,passwd,ca-certificates"

say() { printf 'engine_setup: %s\n' "$*" >&2; }

engine_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
    say "docker/dockerd not installed; install Debian's package: apt-get install -y docker.io"
    exit 4
fi

if engine_up; then
    say "engine already running ($(docker version --format '{{.Server.Version}}'))"
else
    say "starting dockerd (log: $LOG)"
    # dockerd outlives this script: it must not inherit our open files, above all the descriptor of
    # `flock /tmp/cannenv-docker.lock …` that serialises docker test runs (a daemon holding it would
    # hold the lock for as long as it runs, and every later run would wait for ever).
    (
        for fd in /proc/self/fd/*; do
            n="${fd##*/}"
            if [ "$n" -gt 2 ] 2>/dev/null; then eval "exec $n>&-" 2>/dev/null || true; fi
        done
        exec nohup dockerd --bridge=none --iptables=false --ip6tables=false >"$LOG" 2>&1
    ) &
    for _ in $(seq 1 60); do
        engine_up && break
        sleep 1
    done
    if ! engine_up; then
        say "dockerd did not answer within 60 s; last log lines:"
        tail -n 20 "$LOG" >&2 || true
        exit 4
    fi
    say "engine up"
fi

if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    say "base image $BASE_IMAGE already present"
    exit 0
fi

bash "$(dirname "${BASH_SOURCE[0]}")/debootstrap_image.sh" bookworm "$INCLUDE" "$BASE_IMAGE"
