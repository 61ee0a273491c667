#!/bin/sh
# Runs once the Temporal server is up (service temporal-init, image temporalio/admin-tools):
# makes sure the namespace exists and registers the custom search attributes the service sets on
# every memory's workflow (MemoryId, CollectionId, TenantId). Safe to run on every `up`.
set -eu

: "${TEMPORAL_ADDRESS:=temporal:7233}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${TEMPORAL_NAMESPACE_RETENTION:=72h}"
export TEMPORAL_ADDRESS

echo "waiting for Temporal at $TEMPORAL_ADDRESS"
tries=0
until temporal operator cluster health 2>/dev/null | grep -q SERVING; do
  tries=$((tries + 1))
  [ "$tries" -lt 180 ] || { echo "Temporal did not become healthy" >&2; exit 1; }
  sleep 1
done

if temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $TEMPORAL_NAMESPACE exists"
else
  temporal operator namespace create --namespace "$TEMPORAL_NAMESPACE" --retention "$TEMPORAL_NAMESPACE_RETENTION"
fi

# The namespace cache needs a moment before search attributes can be added to a new namespace.
tries=0
until temporal operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || { echo "namespace $TEMPORAL_NAMESPACE is not usable" >&2; exit 1; }
  sleep 1
done

for name in MemoryId CollectionId TenantId; do
  if out=$(temporal operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" \
    --name "$name" --type Keyword 2>&1); then
    echo "search attribute $name created"
  else
    case "$out" in
      *"already exists"* | *"already registered"*) echo "search attribute $name exists" ;;
      *) echo "$out" >&2; exit 1 ;;
    esac
  fi
done
echo "Temporal namespace $TEMPORAL_NAMESPACE is ready"
