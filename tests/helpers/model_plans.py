"""Print, as JSON, the weight plan of each config given (run under a chosen transformers).

``python tests/helpers/model_plans.py CONFIG...``: for each, the transformers version used, the
parameters by role and the weights per device at TP 1/2/8 in bf16, int8 and int4 (and the
checkpoint's own scheme, if it names one).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(paths: list[str]) -> None:
    import transformers

    from cannenv.model import config, memory, quant, trace

    out: dict[str, object] = {"transformers": transformers.__version__}
    for p in paths:
        cfg = config.load(config=p)
        own = quant.from_config(cfg.raw, cfg.origin)
        shp = trace.shape(cfg, skip=own.skip if own else ())
        schemes = ["bf16", "int8", "int4"] + ([own.name] if own else [])
        plans = {}
        for name in schemes:
            sch = own if own is not None and name == own.name else quant.DTYPES[name]
            plans[name] = {
                str(tp): memory.plan(shp, dtype=sch, batch=1, seq_len=1, tp=tp).at_tp.weights
                for tp in (1, 2, 8)
            }
        out[Path(p).stem] = {
            "parameters": shp.params,
            "by_role": shp.by_role(),
            "total": {n: memory.weight_bytes(shp, own if own and n == own.name else n) for n in schemes},
            "per_device": plans,
            "attention": list(shp.attention_kinds),
            "eager_layers": shp.eager_layers,
            "intermediate": shp.intermediate,
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
