#!/usr/bin/env bash
# Make a registry-free arm64 Debian image on an x86_64 machine: debootstrap --arch=arm64 --foreign,
# then the second stage inside the rootfs under QEMU user emulation (the kernel's binfmt_misc entry
# qemu-aarch64 with the F flag, from Debian's qemu-user-static + binfmt-support), then
# `docker import --platform linux/arm64` as IMAGE.
#
# usage: debootstrap_arm64.sh SUITE INCLUDE IMAGE     (needs root, debootstrap, Debian's mirror)
# Exit codes: 4 a tool or the emulation is missing, 6 debootstrap failed.
set -euo pipefail

SUITE="$1" INCLUDE="$2" IMAGE="$3"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
say() { printf 'debootstrap_arm64: %s\n' "$*" >&2; }

command -v debootstrap >/dev/null 2>&1 || { say "debootstrap not installed"; exit 4; }
if ! grep -qs '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
    say "no qemu-aarch64 binfmt_misc entry with the F flag (apt-get install qemu-user-static binfmt-support)"
    exit 4
fi

ROOTFS="$(mktemp -d "/tmp/cannenv-rootfs-arm64-$SUITE.XXXXXX")"
trap 'rm -rf "$ROOTFS" "$ROOTFS.log"' EXIT
say "debootstrap --arch=arm64 --foreign --variant=minbase $SUITE ($INCLUDE)"
debootstrap --arch=arm64 --foreign --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS" "$MIRROR" \
    >"$ROOTFS.log" 2>&1 || { tail -n 30 "$ROOTFS.log" >&2; exit 6; }
say "second stage under QEMU"
chroot "$ROOTFS" /debootstrap/debootstrap --second-stage >>"$ROOTFS.log" 2>&1 || {
    tail -n 30 "$ROOTFS.log" >&2
    exit 6
}
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*
tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$IMAGE" >/dev/null
# `docker import --platform` is ignored by engines without experimental features: the image config
# would say amd64. Rewrite the config's architecture (save, edit, load): the layers are unchanged.
bash "$(dirname "${BASH_SOURCE[0]}")/set_image_arch.sh" "$IMAGE" arm64
say "made $IMAGE ($(docker image inspect -f '{{.Architecture}} {{.Size}}' "$IMAGE"))"
