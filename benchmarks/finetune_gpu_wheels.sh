#!/usr/bin/env bash
# Fills .cache/gpu-wheels/ with what benchmarks/finetune_gpu.sh installs on a GPU machine
# without network: Unsloth and the packages it and deskmate's finetune modules import
# that such a machine (torch, transformers, peft) lacks, and SmolLM2's tokenizer.
# A device call carries 64 MiB, and the two big wheels alone are 72 MB (unsloth 28.6,
# bitsandbytes 43.1): the unsloth wheel loses its `studio/` web app, and bitsandbytes
# keeps only its CUDA 12.6-13.x kernels (the CUDA 11.8-12.4 and ROCm builds go).
# Prints the total size.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.cache/gpu-wheels
py=.venv/bin/python
rm -rf "$out" && mkdir -p "$out/raw"
$py -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_24_x86_64 \
  -d "$out/raw" unsloth==2026.10.9 unsloth_zoo==2026.10.9 bitsandbytes==0.50.2 \
  trl==1.15.0 tyro docstring-parser typeguard shtab gguf tomli-w platformdirs
$py - "$out" <<'PY'
import base64, csv, hashlib, io, sys, zipfile
from pathlib import Path

out = Path(sys.argv[1])
drop = {
    "unsloth-": lambda n: n.startswith("studio/"),
    "bitsandbytes-": lambda n: ("rocm" in n or any(f"cuda{v}." in n for v in ("118", "121", "124")))
    and n.endswith(".so"),
}
for wheel in sorted((out / "raw").glob("*.whl")):
    rule = next((r for prefix, r in drop.items() if wheel.name.startswith(prefix)), None)
    target = out / wheel.name
    if rule is None:
        target.write_bytes(wheel.read_bytes())
        continue
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        kept = [i for i in src.infolist() if not rule(i.filename)]
        record = next(i for i in kept if i.filename.endswith(".dist-info/RECORD"))
        names = {i.filename for i in kept}
        rows = [r for r in csv.reader(io.StringIO(src.read(record).decode())) if r and r[0] in names]
        for info in kept:
            if info is not record:
                dst.writestr(info, src.read(info))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(rows)
        dst.writestr(record, text.getvalue())
PY
rm -rf "$out/raw"
# Unsloth imports datasets at import time; a machine without it needs a second carry:
# PYVER=3.12 fills .cache/gpu-wheels-extra. Only what the lent H200 image lacks is kept
# (datasets, dill, multiprocess: 0.8 MB): pyarrow (55 MB) and pandas (12 MB) are there,
# and with them the carry would not fit the 64 MiB a call takes.
if [ -n "${PYVER:-}" ]; then
  rm -rf "$out-extra" && mkdir -p "$out-extra"
  $py -m pip download --quiet --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --python-version "$PYVER" -d "$out-extra" datasets==4.8.5
  find "$out-extra" -name '*.whl' ! -name 'datasets-*' ! -name 'dill-*' \
    ! -name 'multiprocess-*' -delete
  du -sh "$out-extra"
fi
$py - "$out/tokenizer" <<'PY'
import sys
from pathlib import Path
from transformers import AutoTokenizer
gguf = Path(".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf")
AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(sys.argv[1])
PY
du -sh "$out"; ls -la "$out"
