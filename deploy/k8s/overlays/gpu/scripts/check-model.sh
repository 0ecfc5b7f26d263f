#!/bin/sh
# First init step of a GPU pod: the model EXTRACTOR_MODEL names must be in the
# ollama-models volume, prepared once for the cluster (README.md): its
# manifest and every blob the manifest lists. Without it the gate's warm-up
# load would fail at every retry; the pod stops here instead, saying what is
# missing. Nothing is downloaded: the cluster may have no way out.
set -eu
models=${OLLAMA_MODELS:-/models}
model=${EXTRACTOR_MODEL:?EXTRACTOR_MODEL is not set}

# name[:tag] -> manifests/<registry>/<namespace>/<name>/<tag>, as Ollama stores it.
tag=${model##*:}
name=${model%:*}
case "$tag" in
  "$model" | */*) tag=latest; name=$model ;;
esac
case "$name" in
  */*/*) path=$name ;;
  */*) path=registry.ollama.ai/$name ;;
  *) path=registry.ollama.ai/library/$name ;;
esac
manifest=$models/manifests/$path/$tag

if [ ! -f "$manifest" ]; then
  echo "check-model: $model is not in the ollama-models volume (no $manifest): load it as deploy/k8s/overlays/gpu/README.md says" >&2
  exit 1
fi
missing=0
for digest in $(grep -o 'sha256:[0-9a-f]\{64\}' "$manifest" | sort -u); do
  blob=$models/blobs/sha256-${digest#sha256:}
  if [ ! -s "$blob" ]; then
    echo "check-model: $model lists $digest, but $blob is missing or empty (an interrupted copy?)" >&2
    missing=1
  fi
done
[ "$missing" -eq 0 ] || exit 1
echo "check-model: $model is in $models"
