#!/bin/sh
# Entrypoint of the extractor container in a GPU pod. The gate's
# OLLAMA_CUDA_VISIBLE_DEVICES is the GPU the Ollama sidecar published: the one
# the device plugin gave this pod. The sidecar starts first (its startup probe
# holds this container back), so the wait below is only a guard.
set -eu
published=${VOUCH_GPU_FILE:-/run/vouch-gpu/uuid}

waited=0
while [ ! -s "$published" ]; do
  if [ "$waited" -ge 60 ]; then
    echo "start-extractor: the Ollama sidecar published no GPU in $published within 60 s: see its log (kubectl logs POD -c ollama)" >&2
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done

OLLAMA_CUDA_VISIBLE_DEVICES=$(cat "$published")
export OLLAMA_CUDA_VISIBLE_DEVICES
exec node services/extractor/dist/main.js
