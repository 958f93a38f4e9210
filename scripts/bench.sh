#!/usr/bin/env bash
# Runs the in-process benchmarks and the floors they are measured against, in one run, and prints
# one table — path, floor, Switchboard, ratio, goal (issue "Performance"), met or not — which it also
# writes into docs/performance.md between the "bench:begin" and "bench:end" markers.
# Usage: scripts/bench.sh            (about 3 minutes on 2 cores; builds the jar first)
#        scripts/bench.sh --no-write (print only)
# Not here: the load benchmark (LoadBenchmark, minutes) and the footprint (scripts/footprint.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
write=1
[ "${1:-}" = "--no-write" ] && write=0

mvn -q -B -DskipTests package
cp="target/switchboard.jar:target/test-classes"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "scripts/bench.sh: permission room (about 1 min)" >&2
java -Xmx256m -cp "$cp" io.switchboard.bench.PermissionBenchmark 2>/dev/null | grep -v DEBUG > "$out/permission.txt"
echo "scripts/bench.sh: agent path (about 1 min)" >&2
java -cp "$cp" io.switchboard.bench.AgentBenchmark 2>/dev/null | grep -v DEBUG > "$out/agent.txt"
echo "scripts/bench.sh: outbox (about 1 min)" >&2
java -cp "$cp" io.switchboard.bench.OutboxBenchmark 2>/dev/null | grep -v DEBUG > "$out/outbox.txt"

python3 - "$out" "$write" <<'EOF'
import datetime, os, re, sys
out, write = sys.argv[1], sys.argv[2] == "1"
def text(name):
    return open(os.path.join(out, name)).read()
def num(s):
    return float(s.replace(",", ""))
def find(pattern, name):
    m = re.findall(pattern, text(name))
    if not m:
        sys.exit(f"scripts/bench.sh: no line matching {pattern!r} in the {name} output:\n{text(name)}")
    return m[-1]  # the measured round, after the warm-up

commit = num(find(r"single-row commit at synchronous=FULL: p50 ([\d.,]+) us", "permission.txt"))
echo128, perm128 = find(r"window 128: bus echo ([\d,]+)/s .*register->answer ([\d,]+)/s", "permission.txt")
heap = num(find(r"([\d,]+) bytes each", "permission.txt"))
raw, gw = find(r"measured: chunks/s raw pipe ([\d,]+); through the gateway to a subscriber ([\d,]+)", "agent.txt")
added = num(find(r"measured: permission round trip .* added p50 (-?\d+) us", "agent.txt"))
ob1, ob128, plain1, plain100 = find(r"measured: .*one at a time ([\d,]+), 128 in flight ([\d,]+); plain sqlite-jdbc "
                                    r"one transaction each ([\d,]+), 100 a transaction ([\d,]+)", "outbox.txt")
jar = os.path.getsize("target/switchboard-linux-x86_64.jar") if os.path.exists(
    "target/switchboard-linux-x86_64.jar") else os.path.getsize("target/switchboard-linux-aarch64.jar")

rows = [
    ("agent chunks to a subscriber", f"raw pipe {num(raw):,.0f}/s", f"{num(gw):,.0f}/s",
     num(gw) / num(raw), "≥ 50 % of the floor", num(gw) / num(raw) >= 0.5, "%"),
    ("permission round trip, added p50 (agent's view)", f"two FULL commits {2 * commit:,.0f} µs",
     f"+{added:,.0f} µs", added / (2 * commit), "≤ 1.5× the floor", added <= 1.5 * 2 * commit, "x"),
    ("register→answer, 128 in flight", f"bus echo {num(echo128):,.0f}/s", f"{num(perm128):,.0f}/s",
     num(perm128) / num(echo128), "≥ 30 % of the floor", num(perm128) >= 0.3 * num(echo128), "%"),
    ("outbox enqueue+ack at FULL, 128 in flight", f"sqlite-jdbc, 100 a transaction {num(plain100):,.0f}/s",
     f"{num(ob128):,.0f}/s", num(ob128) / num(plain100), "≥ 50 % of the floor",
     num(ob128) >= 0.5 * num(plain100), "%"),
    ("heap per pending request, 10,000 pending", "—", f"{heap:,.0f} bytes", None, "≤ 2,048 bytes",
     heap <= 2048, None),
    ("the jar for one CPU (linux-x86_64)", "—", f"{jar / 2**20:.1f} MiB", None, "≤ 12 MiB", jar <= 12 * 2**20, None),
]
lines = [f"Run of {datetime.date.today().isoformat()} (`scripts/bench.sh`; {os.cpu_count()} cores):", "",
         "| path | floor in the same run | Switchboard | ratio | goal | met |", "|---|---|---|---|---|---|"]
for path, floor, value, ratio, goal, met, kind in rows:
    r = "—" if ratio is None else (f"{100 * ratio:.0f} %" if kind == "%" else f"{ratio:.1f}×")
    lines.append(f"| {path} | {floor} | {value} | {r} | {goal} | {'yes' if met else '**no**'} |")
table = "\n".join(lines)
print(table)
if write:
    path = "docs/performance.md"
    doc = open(path).read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"scripts/bench.sh: {path} has no {begin} … {end} section to write the table into")
    doc = doc[:doc.index(begin) + len(begin)] + "\n" + table + "\n" + doc[doc.index(end):]
    open(path, "w").write(doc)
    print(f"\n(written to {path})")
EOF
