#!/usr/bin/env bash
# Exercise `cannenv certify llm|perf --device cuda` on a machine with an NVIDIA GPU (e.g. a lent H200).
#
#   bash benchmarks/cuda_check.sh            # from a fresh checkout; < 5 minutes
#
# Needs Python >= 3.10 with torch (a CUDA build) and cannenv's runtime modules already installed
# (click, pydantic, pyyaml, packaging, rich, numpy, cryptography): no network is used. cannenv itself
# runs from the checkout (PYTHONPATH), nothing is installed. Certificates and logs go to $OUT
# (default ./cuda-check-out). Exit status: 4 when torch sees no GPU (nothing would run), else that
# of the last failing step, 0 if all passed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-./cuda-check-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PY" - <<'PYEOF' || exit 4
import importlib, sys
missing = [m for m in ("click", "pydantic", "yaml", "packaging", "rich", "numpy", "cryptography", "torch")
           if importlib.util.find_spec(m) is None]
if missing:
    sys.exit(f"missing Python modules: {', '.join(missing)} (pip install them; no network is used here)")
import torch
if not torch.cuda.is_available():
    # Every stage would be a skip and the script would exit 0: a check that checked nothing.
    sys.exit(f"torch {torch.__version__} (cuda {torch.version.cuda}) sees no CUDA device: nothing to check "
             "here; run on a host with an NVIDIA GPU and a CUDA build of torch")
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, cuda {torch.version.cuda}, "
      f"gpu: {torch.cuda.get_device_name(0)}")
PYEOF
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>/dev/null || true

rc=0
step() { echo; echo "== $*"; "$@" || rc=$?; }
step "$PY" -m cannenv certify llm --device cuda --dtype bf16 --profile --out "$OUT/llm-bf16.json" --timeout 300
step "$PY" -m cannenv certify llm --device cuda --dtype fp16 --out "$OUT/llm-fp16.json" --timeout 300
step "$PY" -m cannenv certify llm --device cuda --dtype fp32 --out "$OUT/llm-fp32.json" --timeout 300
step "$PY" -m cannenv certify perf --device cuda --out "$OUT/perf.json" --timeout 300
step "$PY" -m cannenv cert verify "$OUT/perf.json"
step "$PY" -m cannenv cert diff "$OUT/llm-bf16.json" "$OUT/llm-fp16.json"
echo
"$PY" - "$OUT" <<'PYEOF'
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    cert = json.loads(f.read_text())["certificate"]
    for s in cert["stages"]:
        m = s["metrics"]
        fig = m.get("logits", {}).get("cosine") or m.get("tflops") or m.get("gbs")
        print(f"{f.name:16} {s['id']:18} {s['status']:5} {fig!s:>22}  ratio={m.get('ratio')}")
PYEOF
echo "exit status: $rc (certificates in $OUT)"
exit $rc
