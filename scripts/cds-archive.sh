#!/usr/bin/env bash
# Makes the class-data-sharing archive a Switchboard jar starts faster and smaller with: one start
# of the jar with -XX:ArchiveClassesAtExit that also serves its page once (so the classes of a first
# request are in the archive: 0.2-0.3 s and 5-10 MiB less than an archive of a start alone), then a
# normal stop. Make it again for every jar (an archive of another jar is ignored with a warning).
# It also puts the jar's SQLite library for this machine in native/ beside the archive: the unit
# loads it from there (-Dorg.sqlite.lib.path) instead of extracting it to /tmp at every start,
# about 0.1 s (docs/performance.md). Made with the same jar, it always matches the jar's driver.
# Usage: scripts/cds-archive.sh JAR ARCHIVE [JVM flags the gateway runs with...]
#   e.g. sudo scripts/cds-archive.sh /opt/switchboard/switchboard.jar /opt/switchboard/switchboard.jsa \
#          -Xmx64m -Xss512k -XX:+UseSerialGC
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 JAR ARCHIVE [JVM flags...]" >&2; exit 2; }
jar=$1 archive=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
java "$@" -XX:ArchiveClassesAtExit="$archive" -jar "$jar" --port 0 --data-dir "$work/data" >"$work/out" 2>"$work/err" &
pid=$!
url=
for _ in $(seq 600); do
  url=$(grep -o 'http://[^ ]*/' "$work/out" 2>/dev/null | head -1 || true)
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || { echo "cds-archive: the gateway exited:" >&2; tail -5 "$work/err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "cds-archive: the gateway printed no URL within a minute" >&2; kill $pid; exit 1; }
# The page and what it loads (scripts, styles), as a browser's first visit asks for them.
for path in / $(curl -s "$url" | grep -o '\(src\|href\)="/[^"]*"' | sed 's/^[a-z]*="\/\(.*\)"$/\1/'); do
  curl -s -o /dev/null "${url%/}/${path#/}" || true
done
curl -s -o /dev/null "${url}healthz" || true
kill -TERM $pid
wait $pid || true
[ -s "$archive" ] || { echo "cds-archive: no archive was written to $archive" >&2; exit 1; }
echo "cds-archive: $archive ($(du -k "$archive" | cut -f1) KiB)"

native_dir=$(dirname "$archive")/native
entry="org/sqlite/native/$(java -cp "$jar" org.sqlite.util.OSInfo)/libsqlitejdbc.so"
mkdir -p "$native_dir"
rm -f "$native_dir/libsqlitejdbc.so"
if command -v unzip >/dev/null && unzip -j -o -q "$jar" "$entry" -d "$native_dir" 2>/dev/null; then
  echo "cds-archive: $native_dir/libsqlitejdbc.so (the jar's SQLite library for $(uname -m))"
else
  # Without it the gateway extracts the library from the jar at each start, as it always could.
  echo "cds-archive: no $entry in $jar (or no unzip): the SQLite library is extracted at each start" >&2
fi
