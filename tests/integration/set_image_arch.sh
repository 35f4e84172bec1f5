#!/usr/bin/env bash
# Set the architecture recorded in a local image's config (docker save -> edit -> docker load).
# For images made with `docker import` from a foreign-architecture rootfs: engines without
# experimental features ignore `docker import --platform`. Layers are not touched.
# usage: set_image_arch.sh IMAGE ARCH      (ARCH as in OCI: arm64, amd64)
set -euo pipefail
IMAGE="$1" ARCH="$2"
TMP="$(mktemp -d /tmp/cannenv-setarch.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
docker save -o "$TMP/in.tar" "$IMAGE"
python3 - "$TMP/in.tar" "$TMP/out.tar" "$ARCH" <<'PY'
import hashlib, io, json, sys, tarfile

src, dst, arch = sys.argv[1:]
with tarfile.open(src) as t, tarfile.open(dst, "w") as out:
    manifest = json.load(t.extractfile("manifest.json"))
    old = manifest[0]["Config"]
    cfg = json.load(t.extractfile(old))
    cfg["architecture"] = arch
    cfg.pop("variant", None)
    data = json.dumps(cfg, sort_keys=True).encode()
    new = hashlib.sha256(data).hexdigest() + ".json"
    manifest[0]["Config"] = new
    for m in t.getmembers():
        if m.name in ("manifest.json", "repositories", old):
            continue
        out.addfile(m, t.extractfile(m) if m.isfile() else None)
    for name, payload in ((new, data), ("manifest.json", json.dumps(manifest).encode())):
        info = tarfile.TarInfo(name)
        info.size = len(payload)
        out.addfile(info, io.BytesIO(payload))
PY
docker rmi "$IMAGE" >/dev/null
docker load -q -i "$TMP/out.tar" >/dev/null
