#!/usr/bin/env bash
# Launch time and idle memory of Switchboard beside claude-code-ui (a Node web UI for coding agents),
# measured the same way in the same run: from launch until an HTTP GET of / answers, then the
# resident memory of the process tree 2 s later; fresh data directories, 5 runs each.
# Switchboard runs as packaging/switchboard.service runs it (-Xmx64m, SerialGC, MALLOC_ARENA_MAX=2,
# a CDS archive made once as the installer makes it).
# Usage: scripts/side-by-side.sh [path/to/claude-code-ui/server/cli.js]
#   Without a path it installs @siteboon/claude-code-ui@1.12.0 into target/ccui (npm; its native
#   modules are built with node-gyp, which needs make and a C++ compiler).
# Prints one line per program; run after `mvn -B -q -DskipTests package`.
set -euo pipefail
cd "$(dirname "$0")/.."
jar=target/switchboard.jar
cli=${1:-}
if [ -z "$cli" ]; then
  cli=target/ccui/node_modules/@siteboon/claude-code-ui/server/cli.js
  if [ ! -f "$cli" ]; then
    mkdir -p target/ccui
    (cd target/ccui && npm install --no-audit --no-fund @siteboon/claude-code-ui@1.12.0 >/dev/null \
      && npm rebuild better-sqlite3 bcrypt >/dev/null)
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unit="-Xmx64m -Xms16m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxDirectMemorySize=32m -Dio.netty.allocator.numDirectArenas=2"

# The class-data-sharing archive, as the installer makes it (docs/operations.md).
scripts/cds-archive.sh "$jar" "$work/switchboard.jsa" $unit >/dev/null

# Resident memory of a process and its descendants, in KiB.
tree_rss() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" || true); do
    total=$(( total + $(awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0) ))
  done
  echo $total
}

# measure NAME PORT COMMAND...: mean ms to the first HTTP answer and mean idle RSS (MiB) over 5 runs.
measure() {
  local name=$1 port=$2; shift 2
  local ms=0 rss=0 i
  for i in 1 2 3 4 5; do
    rm -rf "$work/home" && mkdir -p "$work/home"
    local start end
    start=$(date +%s%N)
    HOME="$work/home" PORT=$port "$@" >"$work/out" 2>&1 &
    local pid=$!
    until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
      kill -0 $pid 2>/dev/null || { echo "$name exited:"; tail -5 "$work/out"; exit 1; }
      sleep 0.01
    done
    end=$(date +%s%N)
    ms=$(( ms + (end - start) / 1000000 ))
    sleep 2
    rss=$(( rss + $(tree_rss $pid) ))
    kill -TERM $pid; wait $pid 2>/dev/null || true
  done
  echo "$name: launch to HTTP answering $(( ms / 5 )) ms, idle RSS $(( rss / 5 / 1024 )) MiB (mean of 5)"
}

measure "switchboard (unit flags, CDS)" 18931 env MALLOC_ARENA_MAX=2 java $unit -XX:SharedArchiveFile="$work/switchboard.jsa" -Xshare:auto \
  -Dorg.sqlite.lib.path="$work/native" -Dorg.sqlite.lib.name=libsqlitejdbc.so \
  -jar "$jar" --port 18931 --data-dir "$work/home/data"
measure "claude-code-ui 1.12.0 (node $(node --version))" 18932 node "$cli"
