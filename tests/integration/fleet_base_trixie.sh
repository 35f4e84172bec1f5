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
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
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

if ! command -v debootstrap >/dev/null 2>&1; then
    say "debootstrap not installed; install it: apt-get install -y debootstrap"
    exit 4
fi
if [ ! -e /usr/share/debootstrap/scripts/trixie ]; then
    say "this debootstrap does not know trixie; install a newer debootstrap"
    exit 4
fi

ROOTFS="$(mktemp -d /tmp/cannenv-rootfs-trixie.XXXXXX)"
trap 'rm -rf "$ROOTFS" "$ROOTFS.log"' EXIT
say "debootstrap --variant=minbase trixie ($INCLUDE) from $MIRROR"
debootstrap --variant=minbase --include="$INCLUDE" trixie "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
    tail -n 30 "$ROOTFS.log" >&2
    exit 6
}
# Host keys are made when a container starts (ssh-keygen -A); caches, docs and locales are not needed.
rm -rf "$ROOTFS"/etc/ssh/ssh_host_* "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*
mkdir -p "$ROOTFS/run/sshd" "$ROOTFS/root/.ssh"
chmod 700 "$ROOTFS/root/.ssh"
tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$IMAGE" >/dev/null
say "made $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE") bytes, $(docker run --rm --network none "$IMAGE" python3 -V))"
