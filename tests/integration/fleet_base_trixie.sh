#!/usr/bin/env bash
# Make a registry-free SSH host image whose Python differs from the controller's: Debian trixie
# (python3 is CPython 3.13) with openssh-server, made with debootstrap + `docker import`, like
# engine_setup.sh makes the bookworm base. The fleet bundle tests push cannenv to it over SSH.
# Cached by image name; idempotent.
#
# Needs root, a running Docker engine (tests/integration/engine_setup.sh starts one), debootstrap
# and Debian's mirror. Environment: CANNENV_FLEET_TRIXIE_IMAGE (default cannenv-test/fleet-host:trixie),
#                                   DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IMAGE="${CANNENV_FLEET_TRIXIE_IMAGE:-cannenv-test/fleet-host:trixie}"
# python3 runs the bundle; openssh-server is the host's door; nothing else is needed.
INCLUDE="python3,openssh-server"

say() { printf 'fleet_base_trixie: %s\n' "$*" >&2; }

if ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    bash "$HERE/engine_setup.sh"
fi

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "host image $IMAGE already present"
    exit 0
fi

bash "$HERE/debootstrap_image.sh" trixie "$INCLUDE" "$IMAGE"
say "$IMAGE runs $(docker run --rm --network none "$IMAGE" python3 -V)"
