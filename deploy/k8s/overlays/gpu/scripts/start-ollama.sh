#!/bin/sh
# Entrypoint of the Ollama sidecar. The NVIDIA device plugin allocated this
# container one GPU (nvidia.com/gpu: 1), and the container sees only that one.
# Its UUID goes to /run/vouch-gpu/uuid, where the extractor's gate reads it,
# and pins Ollama to it by UUID (CUDA_VISIBLE_DEVICES), the form the gate
# requires. Seeing no GPU or several is a hard stop: Ollama never starts on
# anything but its own GPU.
set -eu
published=${VOUCH_GPU_FILE:-/run/vouch-gpu/uuid}

if ! listed=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>&1); then
  echo "start-ollama: nvidia-smi failed in the Ollama container ($listed): check runtimeClassName nvidia and the NVIDIA device plugin on this node" >&2
  exit 1
fi
uuids=$(printf '%s\n' "$listed" | tr -d ' \r' | grep '^GPU-' || true)
count=$(printf '%s\n' "$uuids" | grep -c '^GPU-' || true)
if [ "$count" -ne 1 ]; then
  echo "start-ollama: this container sees $count GPUs ($listed), not the one nvidia.com/gpu the device plugin allocated to it: check the device plugin" >&2
  exit 1
fi

printf '%s\n' "$uuids" > "$published.tmp"
mv "$published.tmp" "$published"
echo "start-ollama: serving on $uuids"
CUDA_VISIBLE_DEVICES=$uuids
export CUDA_VISIBLE_DEVICES
exec ollama serve
