#!/usr/bin/env bash
# Footprint of the fat jar on this machine: size, time from start to ready (the printed URL line),
# and resident memory when idle, for a few JVM settings. Prints one line per setting.
# Run after `mvn -B -q -DskipTests package`; figures go to docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
jar=target/switchboard.jar
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "jar: $(du -k "$jar" | cut -f1) KiB"

# A class-data-sharing archive, as the installer makes it (scripts/cds-archive.sh).
scripts/cds-archive.sh "$jar" "$work/switchboard.jsa" >/dev/null

measure() {
  local name=$1; shift
  local total=0 rss=0
  for i in 1 2 3 4 5; do
    rm -rf "$work/data"
    local start end
    start=$(date +%s%N)
    java "$@" -jar "$jar" --port 0 --data-dir "$work/data" >"$work/out" 2>"$work/err" &
    local pid=$!
    until grep -q listening "$work/out" 2>/dev/null; do sleep 0.01; done
    end=$(date +%s%N)
    total=$(( total + (end - start) / 1000000 ))
    sleep 2
    rss=$(( rss + $(ps -o rss= -p $pid) ))
    kill -TERM $pid; wait $pid || true
  done
  echo "$name: start to ready $(( total / 5 )) ms, idle RSS $(( rss / 5 / 1024 )) MiB (mean of 5)"
}

measure "JVM defaults"
measure "-Xmx64m" -Xmx64m
measure "-Xmx64m SerialGC" -Xmx64m -XX:+UseSerialGC
measure "-Xmx64m SerialGC small-host (unit)" -Xmx64m -Xms16m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxDirectMemorySize=32m -Dio.netty.allocator.numDirectArenas=2
measure "-Xmx64m SerialGC + CDS archive" -Xmx64m -XX:+UseSerialGC -XX:SharedArchiveFile="$work/switchboard.jsa"
