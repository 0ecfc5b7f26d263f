#!/bin/sh
# nvidia-smi for the extractor's gate (NVIDIA_SMI), limited to this pod's GPU.
# The extractor container gets the driver utilities of every GPU on the node
# (NVIDIA_VISIBLE_DEVICES=all, NVIDIA_DRIVER_CAPABILITIES=utility: no compute),
# since a pod cannot name beforehand the device the plugin will give its
# sidecar. -i holds each query (devices, MIG modes, compute apps) to the GPU
# the sidecar was given, so the processes of other pods on other GPUs of the
# node are not taken for this pod's.
published=${VOUCH_GPU_FILE:-/run/vouch-gpu/uuid}
if ! uuid=$(cat "$published" 2>/dev/null) || [ -z "$uuid" ]; then
  echo "pod-nvidia-smi: the Ollama sidecar published no GPU in $published" >&2
  exit 6
fi
exec nvidia-smi -i "$uuid" "$@"
