#!/bin/sh
# Creates, once, the secrets docker-compose.yml wires into every API replica. Never overwrites.
# The keysets (events, snapshots: separate keys) are made by the admin CLI of this checkout (`npm run admin -- signing-key rotate`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${ENGRAM_SECRETS_DIR:-$here/secrets}
mkdir -p "$dir"
chmod 700 "$dir"
# The containers run as uid 1000 (node): the files are readable, the folder is not listable by others.
if [ ! -s "$dir/upload-signing.secret" ]; then
  head -c 48 /dev/urandom | base64 | tr -d '\n=' >"$dir/upload-signing.secret"
  chmod 644 "$dir/upload-signing.secret"
  echo "created $dir/upload-signing.secret"
fi
if [ ! -s "$dir/event-signing-keyset.json" ]; then
  (cd "$here/.." && PRODUCTION_MODE=false EVENT_SIGNING_KEYSET_PATH="$dir/event-signing-keyset.json" npm run --silent admin -- signing-key rotate)
  chmod 644 "$dir/event-signing-keyset.json"
fi
if [ ! -s "$dir/snapshot-signing-keyset.json" ]; then
  (cd "$here/.." && PRODUCTION_MODE=false EVENT_SIGNING_KEYSET_PATH="$dir/snapshot-signing-keyset.json" npm run --silent admin -- signing-key rotate)
  chmod 644 "$dir/snapshot-signing-keyset.json"
fi
