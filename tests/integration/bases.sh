#!/usr/bin/env bash
# The Docker engine and the registry-free Debian images the integration tests run on, each made once
# per engine and shared by every test, every pytest worker and every concurrent run that needs it.
#
#   bases.sh engine                  start dockerd unless an engine answers (DOCKER_HOST or the socket)
#   bases.sh NAME...                 make each image NAME unless it exists (waits for a build under way)
#   bases.sh --background NAME...    start the engine, then make each NAME in a detached job; returns
#                                    at once (log: /tmp/cannenv-base-<engine>-NAME.log)
#
# NAME    image (environment variable that renames it)                 debootstrap --include
# bookworm  cannenv-test/debian:bookworm (CANNENV_TEST_BASE_IMAGE),     python3,python3-venv,passwd,
#           also tagged cannenv-test/fleet-host:bookworm                ca-certificates,openssh-server
#           (CANNENV_FLEET_HOST_IMAGE): image builds, fleet, provision,
#           collective and k8s tests all run on this one amd64 base
# arm64     cannenv-test/i13-debian-arm64:bookworm                      python3,python3-venv,passwd
#           (CANNENV_TEST_ARM64_IMAGE): second stage under QEMU
# trixie    cannenv-test/fleet-host:trixie (CANNENV_FLEET_TRIXIE_IMAGE)     python3,openssh-server
# bullseye  cannenv-test/fleet-host:bullseye (CANNENV_FLEET_BULLSEYE_IMAGE) python3,openssh-server
#
# Each image is made under its own lock (flock on /tmp/cannenv-base-<engine>-NAME.lock, <engine> a
# hash of DOCKER_HOST): a second caller waits for the first and then finds the image. Nothing is
# ever removed. Needs root, Debian's docker.io and debootstrap, Debian's mirror (DEBIAN_MIRROR).
# Exit codes: 4 a tool, the engine or QEMU's binfmt entry is missing; 6 debootstrap failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOG="${DOCKERD_LOG:-/tmp/cannenv-dockerd.log}"
ENGINE_KEY="$(printf '%s' "${DOCKER_HOST:-default}" | sha256sum | cut -c1-8)"
LOCKS="/tmp/cannenv-base-$ENGINE_KEY"

say() { printf 'bases: %s\n' "$*" >&2; }

image_of() {
    case "$1" in
        bookworm) echo "${CANNENV_TEST_BASE_IMAGE:-cannenv-test/debian:bookworm}" ;;
        arm64) echo "${CANNENV_TEST_ARM64_IMAGE:-cannenv-test/i13-debian-arm64:bookworm}" ;;
        trixie) echo "${CANNENV_FLEET_TRIXIE_IMAGE:-cannenv-test/fleet-host:trixie}" ;;
        bullseye) echo "${CANNENV_FLEET_BULLSEYE_IMAGE:-cannenv-test/fleet-host:bullseye}" ;;
        *) say "unknown base '$1' (bookworm, arm64, trixie, bullseye, all)"; exit 2 ;;
    esac
}

# close every descriptor above stderr (in a subshell about to exec a long-lived process)
close_fds() {
    local fd n
    for fd in /proc/self/fd/*; do
        n="${fd##*/}"
        if [ "$n" -gt 2 ] 2>/dev/null; then eval "exec $n>&-" 2>/dev/null || true; fi
    done
}

engine_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

ensure_engine() {
    if ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
        say "docker/dockerd not installed; install Debian's package: apt-get install -y docker.io"
        exit 4
    fi
    engine_up && return 0
    if [ -n "${DOCKER_HOST:-}" ]; then
        say "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine (this script starts only the default one)"
        exit 4
    fi
    # one starter at a time: two daemons on one socket would fight over it
    exec {lock}>"/tmp/cannenv-dockerd.lock"
    flock "$lock"
    if ! engine_up; then
        say "starting dockerd (no bridge, no iptables; log: $LOG)"
        # dockerd outlives this script: it must not inherit our open files (a lock's descriptor above
        # all: a daemon holding it would hold the lock for as long as it runs).
        (
            close_fds
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
    flock -u "$lock"
    exec {lock}>&-
}

make_base() {
    local name="$1" image
    image="$(image_of "$name")"
    exec {lock}>"$LOCKS-$name.lock"
    flock "$lock"
    if docker image inspect "$image" >/dev/null 2>&1; then
        say "$image present"
    else
        local t0=$SECONDS
        case "$name" in
            bookworm)
                bash "$HERE/debootstrap_image.sh" bookworm \
                    python3,python3-venv,passwd,ca-certificates,openssh-server "$image" ;;
            arm64) bash "$HERE/debootstrap_image.sh" bookworm python3,python3-venv,passwd "$image" arm64 ;;
            trixie | bullseye) bash "$HERE/debootstrap_image.sh" "$name" python3,openssh-server "$image" ;;
        esac
        say "made $image in $((SECONDS - t0)) s"
    fi
    if [ "$name" = bookworm ]; then
        # the SSH host image is this base (sshd is in it); an engine that has one already keeps it
        local host="${CANNENV_FLEET_HOST_IMAGE:-cannenv-test/fleet-host:bookworm}"
        docker image inspect "$host" >/dev/null 2>&1 || docker tag "$image" "$host"
    fi
    flock -u "$lock"
    exec {lock}>&-
}

background=0
if [ "${1:-}" = "--background" ]; then
    background=1
    shift
fi
names=()
for arg in "$@"; do
    case "$arg" in
        all) names+=(bookworm arm64 trixie bullseye) ;;
        engine) ;;
        *) image_of "$arg" >/dev/null; names+=("$arg") ;;
    esac
done

ensure_engine
for name in "${names[@]}"; do
    if [ "$background" = 1 ]; then
        say "making $name in the background (log: $LOCKS-$name.log)"
        (
            close_fds  # not the caller's pipes: pytest would wait for their end
            exec nohup setsid bash "$HERE/bases.sh" "$name" </dev/null >"$LOCKS-$name.log" 2>&1
        ) &
    else
        make_base "$name"
    fi
done
