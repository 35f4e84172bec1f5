#!/usr/bin/env bash
# Make a registry-free SSH host image of another Debian release, whose python3 differs from the
# controller's: debootstrap + `docker import` (debootstrap_image.sh), like engine_setup.sh makes the
# bookworm base, with openssh-server. The fleet bundle tests push cannenv to such hosts over SSH:
#   fleet_base_debian.sh trixie   cannenv-test/fleet-host:trixie     # python3 is CPython 3.13
#   fleet_base_debian.sh bullseye cannenv-test/fleet-host:bullseye   # python3 is CPython 3.9: too old
# Cached by image name; idempotent.
#
# Needs root, a running Docker engine (tests/integration/engine_setup.sh starts one), debootstrap
# and Debian's mirror. Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE="${1:?usage: fleet_base_debian.sh SUITE IMAGE}"
IMAGE="${2:?usage: fleet_base_debian.sh SUITE IMAGE}"
# python3 is what runs (or fails to run) the bundle; openssh-server is the host's door.
INCLUDE="python3,openssh-server"

say() { printf 'fleet_base_debian(%s): %s\n' "$SUITE" "$*" >&2; }

if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    bash "$HERE/engine_setup.sh"
fi

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "host image $IMAGE already present"
    exit 0
fi

bash "$HERE/debootstrap_image.sh" "$SUITE" "$INCLUDE" "$IMAGE"
say "$IMAGE runs $(docker run --rm --network none "$IMAGE" python3 -V)"
