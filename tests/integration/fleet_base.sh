#!/usr/bin/env bash
# Make the registry-free image the fleet tests run their SSH hosts from: engineer E's base image
# (tests/integration/engine_setup.sh: debootstrap + docker import) plus openssh-server, installed
# with apt in a container on the host network and committed. Cached by image name; idempotent.
#
# Environment: CANNENV_FLEET_HOST_IMAGE (default cannenv-test/fleet-host:bookworm),
#              CANNENV_TEST_BASE_IMAGE (default cannenv-test/debian:bookworm).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IMAGE="${CANNENV_FLEET_HOST_IMAGE:-cannenv-test/fleet-host:bookworm}"
BASE="${CANNENV_TEST_BASE_IMAGE:-cannenv-test/debian:bookworm}"

say() { printf 'fleet_base: %s\n' "$*" >&2; }

bash "$HERE/engine_setup.sh"

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "host image $IMAGE already present"
    exit 0
fi

NAME="cannenv-fleet-base-$$"
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
say "installing openssh-server into $BASE"
docker run --name "$NAME" --network host "$BASE" sh -c '
    set -e
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /etc/ssh/ssh_host_*
    mkdir -p /run/sshd /root/.ssh
    chmod 700 /root/.ssh
' >&2
docker commit --change 'CMD ["/bin/bash"]' "$NAME" "$IMAGE" >/dev/null
say "made $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE") bytes)"
