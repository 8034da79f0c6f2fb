#!/usr/bin/env bash
# One GRPO step of a Qwen3-4B-shaped model through Unsloth on a CUDA GPU: peak VRAM
# (measured), rollout tokens/s, step time; one JSON object as the last line.
#
#   benchmarks/finetune_gpu.sh [WHEELS]      # WHEELS: default .cache/gpu-wheels
#
# Made for a GPU machine with torch, transformers and peft but no Unsloth and no
# network. `benchmarks/finetune_gpu_wheels.sh` fills WHEELS here (Unsloth and what it
# imports, slimmed to fit the 64 MiB a device call carries, and SmolLM2's tokenizer);
# this script installs them into a private folder (the machine's torch, transformers
# and peft stay as they are), puts deskmate on the path and runs benchmarks/finetune_gpu.py.
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=${1:-.cache/gpu-wheels}
py=${PYTHON:-python3}
[ -d "$wheels/tokenizer" ] || { echo '{"error": "no carried wheels in '"$wheels"': run benchmarks/finetune_gpu_wheels.sh first"}'; exit 2; }
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
extra=()
[ -d "$wheels-extra" ] && extra=("$wheels-extra"/*.whl)  # a second carry, if made
$py -m pip install --quiet --no-index --no-deps --target "$site" "$wheels"/*.whl "${extra[@]}"
ln -s "$PWD" "$site/deskmate"  # the repository is the package, as the editable install has it
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader >&2 || true
$py -c 'import torch, transformers, peft; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "peft", peft.__version__)' >&2
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export UNSLOTH_DISABLE_STATISTICS=1
missing=$($py -c 'import importlib.util as u; print(" ".join(m for m in ("datasets", "pyarrow", "pandas", "accelerate", "sentencepiece") if u.find_spec(m) is None))')
[ -z "$missing" ] || echo "not on this machine (Unsloth may need them): $missing" >&2
exec $py benchmarks/finetune_gpu.py --tokenizer "$wheels/tokenizer"
