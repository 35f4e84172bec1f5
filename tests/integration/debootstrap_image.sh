#!/usr/bin/env bash
# Make a registry-free Docker image from Debian's packages: debootstrap --variant=minbase SUITE with
# INCLUDE, trimmed (package caches, docs, locales, SSH host keys), then `docker import` as IMAGE.
# Used by engine_setup.sh (bookworm base) and fleet_base_debian.sh (hosts with another Python).
#
# usage: debootstrap_image.sh SUITE INCLUDE IMAGE     (needs root, debootstrap, Debian's mirror)
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Exit codes: 4 a tool is missing, 6 debootstrap failed.
set -euo pipefail

SUITE="$1" INCLUDE="$2" IMAGE="$3"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
say() { printf 'debootstrap_image: %s\n' "$*" >&2; }

if ! command -v debootstrap >/dev/null 2>&1; then
    say "debootstrap not installed; install it: apt-get install -y debootstrap"
    exit 4
fi
if [ ! -e "/usr/share/debootstrap/scripts/$SUITE" ]; then
    say "this debootstrap does not know $SUITE; install a newer debootstrap"
    exit 4
fi

ROOTFS="$(mktemp -d "/tmp/cannenv-rootfs-$SUITE.XXXXXX")"
trap 'rm -rf "$ROOTFS" "$ROOTFS.log"' EXIT
say "debootstrap --variant=minbase $SUITE ($INCLUDE) from $MIRROR"
debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
    tail -n 30 "$ROOTFS.log" >&2
    exit 6
}
# Keep it small; SSH host keys (if any) are made when a container starts (ssh-keygen -A).
rm -rf "$ROOTFS"/etc/ssh/ssh_host_* "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*
tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$IMAGE" >/dev/null
say "made $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE") bytes)"
