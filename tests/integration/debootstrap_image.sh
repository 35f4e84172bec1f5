#!/usr/bin/env bash
# Make a registry-free Docker image from Debian's packages: debootstrap --variant=minbase SUITE with
# INCLUDE, trimmed (package caches, docs, locales, SSH host keys), then `docker import` as IMAGE.
# For a foreign ARCH (arm64 on an x86_64 machine): debootstrap --foreign, the second stage inside the
# rootfs under QEMU user emulation (binfmt_misc entry qemu-aarch64 with the F flag, from Debian's
# qemu-user-static + binfmt-support), and the image config's architecture set to ARCH.
# Called by bases.sh, which makes each test image once.
#
# usage: debootstrap_image.sh SUITE INCLUDE IMAGE [ARCH]   (needs root, debootstrap, Debian's mirror)
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Exit codes: 4 a tool or the emulation is missing, 6 debootstrap failed.
set -euo pipefail

SUITE="$1" INCLUDE="$2" IMAGE="$3" ARCH="${4:-}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { printf 'debootstrap_image(%s%s): %s\n' "$SUITE" "${ARCH:+/$ARCH}" "$*" >&2; }

if ! command -v debootstrap >/dev/null 2>&1; then
    say "debootstrap not installed; install it: apt-get install -y debootstrap"
    exit 4
fi
if [ ! -e "/usr/share/debootstrap/scripts/$SUITE" ]; then
    say "this debootstrap does not know $SUITE; install a newer debootstrap"
    exit 4
fi
if [ -n "$ARCH" ] && [ "$ARCH" != "$(dpkg --print-architecture)" ]; then
    [ "$ARCH" = arm64 ] || { say "only arm64 is emulated here"; exit 4; }
    if ! grep -qs '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
        say "no qemu-aarch64 binfmt_misc entry with the F flag (apt-get install qemu-user-static binfmt-support)"
        exit 4
    fi
    FOREIGN=1
else
    ARCH="" FOREIGN=0
fi

ROOTFS="$(mktemp -d "/tmp/cannenv-rootfs-$SUITE${ARCH:+-$ARCH}.XXXXXX")"
trap 'rm -rf "$ROOTFS" "$ROOTFS.log"' EXIT
if [ "$FOREIGN" = 1 ]; then
    say "debootstrap --arch=$ARCH --foreign --variant=minbase ($INCLUDE) from $MIRROR"
    debootstrap --arch="$ARCH" --foreign --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS" "$MIRROR" \
        >"$ROOTFS.log" 2>&1 || { tail -n 30 "$ROOTFS.log" >&2; exit 6; }
    say "second stage under QEMU"
    chroot "$ROOTFS" /debootstrap/debootstrap --second-stage >>"$ROOTFS.log" 2>&1 || {
        tail -n 30 "$ROOTFS.log" >&2
        exit 6
    }
else
    say "debootstrap --variant=minbase ($INCLUDE) from $MIRROR"
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
        tail -n 30 "$ROOTFS.log" >&2
        exit 6
    }
fi
# Keep it small; SSH host keys (if any) are made when a container starts (ssh-keygen -A).
rm -rf "$ROOTFS"/etc/ssh/ssh_host_* "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*
tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$IMAGE" >/dev/null
if [ "$FOREIGN" = 1 ]; then
    # `docker import --platform` is ignored by engines without experimental features: the image
    # config would say amd64. Rewrite the config's architecture (save, edit, load): layers unchanged.
    bash "$HERE/set_image_arch.sh" "$IMAGE" "$ARCH"
fi
say "made $IMAGE ($(docker image inspect -f '{{.Architecture}} {{.Size}}' "$IMAGE") bytes)"
