#!/usr/bin/env bash
# Runs the in-process benchmarks and the floors they are measured against, in one run, and prints
# one table — path, floor, Switchboard, ratio, goal (issue "Performance"), met or not — which it also
# writes into docs/performance.md between the "bench:begin" and "bench:end" markers.
# Also draws docs/bench-load.svg: chunk latency (agent to browser) against load, from the load benchmark.
# Usage: scripts/bench.sh            (about 12 minutes on 2 cores; builds the jar first)
#        scripts/bench.sh --no-write (print only)
# Not here: the footprint (scripts/footprint.sh).
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
echo "scripts/bench.sh: agent path, one node and across two cluster nodes (about 2 min)" >&2
java -Dcluster=true -cp "$cp:target/cluster/*" io.switchboard.bench.AgentBenchmark 2>/dev/null | grep -v DEBUG \
  > "$out/agent.txt"
echo "scripts/bench.sh: outbox (about 1 min)" >&2
java -cp "$cp" io.switchboard.bench.OutboxBenchmark 2>/dev/null | grep -v DEBUG > "$out/outbox.txt"
echo "scripts/bench.sh: launch and idle memory beside claude-code-ui (about 1 min; installs it on first use)" >&2
scripts/side-by-side.sh > "$out/side.txt" 2>&1 || echo "(side by side not measured: $(tail -1 "$out/side.txt"))" >&2
echo "scripts/bench.sh: load, the gateway as a process of its own with 500 sockets (about 5 min)" >&2
java -Xmx1g -Dsweep=100,50,10 -DstreamingOnly=true -cp "$cp" io.switchboard.bench.LoadBenchmark 2>/dev/null \
  | grep -v DEBUG > "$out/load.txt"

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
store_write = num(find(r"store room, one ledger write .* at a time: p50 ([\d.,]+) us", "permission.txt"))
echo128, perm128 = find(r"window 128: bus echo ([\d,]+)/s .*register->answer ([\d,]+)/s", "permission.txt")
heap = num(find(r"([\d,]+) bytes each", "permission.txt"))
raw, gw = find(r"measured: chunks/s raw pipe ([\d,]+); through the gateway to a subscriber ([\d,]+)", "agent.txt")
added = num(find(r"measured: permission round trip \(us\) raw pipe.* added p50 (-?\d+) us", "agent.txt"))
cross_gw = num(find(r"measured: chunks/s to a subscriber on another cluster node \(plain bus\) ([\d,]+)", "agent.txt"))
cross_added = num(find(r"measured: permission round trip answered from another cluster node \(plain bus\) .* "
                       r"added p50 (-?\d+) us", "agent.txt"))
tls_gw = num(find(r"measured: chunks/s to a subscriber on another cluster node \(mutual TLS\) ([\d,]+)", "agent.txt"))
tls_added = num(find(r"measured: permission round trip answered from another cluster node \(mutual TLS\) .* "
                     r"added p50 (-?\d+) us", "agent.txt"))
ob1, ob128, plain1, plain100 = find(r"measured: .*one at a time ([\d,]+), 128 in flight ([\d,]+); plain sqlite-jdbc "
                                    r"one transaction each ([\d,]+), 100 a transaction ([\d,]+)", "outbox.txt")
# The load rounds: (label, chunks/s, p50 ms, p99 ms), the warm-up first, the issue's 2,500 chunks/s last.
rounds, label = [], None
for line in text("load.txt").splitlines():
    m = re.match(r"(warm-up round|sweep|streaming)", line)
    if m:
        label = m.group(1)
    m = re.search(r"chunk latency agent->browser at ([\d,]+) chunks/s: p50 ([\d.]+) ms, p99 ([\d.]+) ms", line)
    if m and label:
        rounds.append((label, num(m.group(1)), num(m.group(2)), num(m.group(3))))
load = [r for r in rounds if r[0] == "streaming"]
if not load:
    sys.exit(f"scripts/bench.sh: no measured load round in the load benchmark's output:\n{text('load.txt')}")
_, load_rate, load_p50, load_p99 = load[-1]
sockets = find(r"(\d+) sockets open over", "load.txt")
rss_idle = num(find(r"idle, no socket: RSS (\d+) MiB", "load.txt"))
rss_open = num(find(r"sockets open over .*: RSS (\d+) MiB", "load.txt"))
side = text("side.txt")
sb = re.search(r"switchboard .*: launch to HTTP answering (\d+) ms, idle RSS (\d+) MiB", side)
cc = re.search(r"claude-code-ui .*: launch to HTTP answering (\d+) ms, idle RSS (\d+) MiB", side)
jar = os.path.getsize("target/switchboard-linux-x86_64.jar") if os.path.exists(
    "target/switchboard-linux-x86_64.jar") else os.path.getsize("target/switchboard-linux-aarch64.jar")

rows = [
    ("agent chunks to a subscriber", f"raw pipe {num(raw):,.0f}/s", f"{num(gw):,.0f}/s",
     num(gw) / num(raw), "≥ 50 % of the floor", num(gw) / num(raw) >= 0.5, "%"),
    ("permission round trip, added p50 (agent's view)", f"two FULL commits {2 * commit:,.0f} µs",
     f"+{added:,.0f} µs", added / (2 * commit), "≤ 1.5× the floor", added <= 1.5 * 2 * commit, "x"),
    ("of it: one store ledger write (bus, writer thread, rows, FULL commit)", f"one FULL commit {commit:,.0f} µs",
     f"{store_write:,.0f} µs", store_write / commit, "(a round trip makes two)", None, "x"),
    ("cluster: chunks to a subscriber on another node (loopback)", f"one node {num(gw):,.0f}/s",
     f"{cross_gw:,.0f}/s", cross_gw / num(gw), "(issue Cluster mode: beside one node)", None, "%"),
    ("cluster: permission round trip answered from another node, added p50", f"one node +{added:,.0f} µs",
     f"+{cross_added:,.0f} µs", cross_added / added if added > 0 else None, "(beside one node)", None, "x"),
    ("cluster: the same hop with mutual TLS, chunks", f"plain bus {cross_gw:,.0f}/s", f"{tls_gw:,.0f}/s",
     tls_gw / cross_gw, "(issue: Cluster links only members can use)", None, "%"),
    ("cluster: the same hop with mutual TLS, round trip added p50", f"plain bus +{cross_added:,.0f} µs",
     f"+{tls_added:,.0f} µs", tls_added / cross_added if cross_added > 0 else None, "(beside the plain bus)", None,
     "x"),
    ("register→answer, 128 in flight", f"bus echo {num(echo128):,.0f}/s", f"{num(perm128):,.0f}/s",
     num(perm128) / num(echo128), "≥ 30 % of the floor", num(perm128) >= 0.3 * num(echo128), "%"),
    ("outbox enqueue+ack at FULL, 128 in flight", f"sqlite-jdbc, 100 a transaction {num(plain100):,.0f}/s",
     f"{num(ob128):,.0f}/s", num(ob128) / num(plain100), "≥ 50 % of the floor",
     num(ob128) >= 0.5 * num(plain100), "%"),
    (f"chunk latency agent→browser, p50, {load_rate:,.0f} chunks/s to {sockets} sockets", "—",
     f"{load_p50:,.1f} ms", None, "≤ 50 ms", load_p50 <= 50, None),
    (f"chunk latency agent→browser, p99, same run", "—", f"{load_p99:,.1f} ms", None, "≤ 250 ms",
     load_p99 <= 250, None),
] + ([
    ("launch to HTTP answering, fresh data directory (unit flags, CDS)", f"claude-code-ui 1.12.0 {cc[1]} ms",
     f"{sb[1]} ms", num(sb[1]) / num(cc[1]), "below claude-code-ui", num(sb[1]) < num(cc[1]), "x"),
    ("idle RSS, the same start", f"claude-code-ui 1.12.0 {cc[2]} MiB", f"{sb[2]} MiB", num(sb[2]) / num(cc[2]),
     "below claude-code-ui", num(sb[2]) < num(cc[2]), "x"),
] if sb and cc else [("launch and idle RSS beside claude-code-ui", "not measured (scripts/side-by-side.sh failed)",
                      "—", None, "below claude-code-ui", False, None)]) + [
    ("RSS under the load benchmark (unit flags, CDS), idle", "—", f"{rss_idle:,.0f} MiB", None, "—", None, None),
    (f"the same with {sockets} chat sockets open", "—", f"{rss_open:,.0f} MiB", None, "≤ 128 MiB",
     rss_open <= 128, None),
    ("heap per pending request, 10,000 pending", "—", f"{heap:,.0f} bytes", None, "≤ 2,048 bytes",
     heap <= 2048, None),
    ("the jar for one CPU (linux-x86_64)", "—", f"{jar / 2**20:.1f} MiB", None, "≤ 12 MiB", jar <= 12 * 2**20, None),
]
lines = [f"Run of {datetime.date.today().isoformat()} (`scripts/bench.sh`; {os.cpu_count()} cores):", "",
         "| path | floor in the same run | Switchboard | ratio | goal | met |", "|---|---|---|---|---|---|"]
for path, floor, value, ratio, goal, met, kind in rows:
    r = "—" if ratio is None else (f"{100 * ratio:.0f} %" if kind == "%" else f"{ratio:.1f}×")
    verdict = "—" if met is None else "yes" if met else "**no**"
    lines.append(f"| {path} | {floor} | {value} | {r} | {goal} | {verdict} |")
lines += ["", "![Chunk latency from agent to browser against load, 50 agents and 500 sockets; "
          "p50 and p99](bench-load.svg)"]
table = "\n".join(lines)

def chart(points):
    """An SVG of p50 and p99 latency (log scale) against chunks/s, with the goals at 2,500/s."""
    import math
    w, h, left, bottom, top, right = 640, 380, 70, 50, 50, 20
    xs = sorted({p[1] for p in points})
    x0, x1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    y0, y1 = -1, 4  # 0.1 ms .. 10 s
    X = lambda v: left + (math.log10(v) - x0) / (x1 - x0) * (w - left - right)
    Y = lambda ms: h - bottom - (math.log10(max(ms, 0.1)) - y0) / (y1 - y0) * (h - bottom - top)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">Chunk latency, agent to browser (50 agents, {sockets} sockets; '
           f'{datetime.date.today().isoformat()})</text>']
    for e in range(y0, y1 + 1):
        y = Y(10 ** e)
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g} ms</text>')
    for v in xs:
        out.append(f'<text x="{X(v):.1f}" y="{h - bottom + 18}" text-anchor="middle">{v:,.0f}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 10}" text-anchor="middle">chunks per second, all agents</text>')
    for goal, colour in ((50, "#1f77b4"), (250, "#d62728")):
        out.append(f'<line x1="{X(2500) - 30:.1f}" x2="{X(2500) + 30:.1f}" y1="{Y(goal):.1f}" y2="{Y(goal):.1f}" '
                   f'stroke="{colour}" stroke-dasharray="4 3"/>')
    for idx, name, colour in ((2, "p50", "#1f77b4"), (3, "p99", "#d62728")):
        pts = sorted((p[1], p[idx]) for p in points)
        path = " ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{X(a):.1f}" cy="{Y(b):.1f}" r="3" fill="{colour}"/>' for a, b in pts]
        out.append(f'<text x="{X(pts[-1][0]) + 6:.1f}" y="{Y(pts[-1][1]) + 4:.1f}" fill="{colour}">{name}</text>')
    out.append(f'<text x="{left}" y="36" fill="#555">dashed: the goals at 2,500/s '
               f'(p50 ≤ 50 ms, p99 ≤ 250 ms)</text>')
    return "\n".join(out + ["</svg>", ""])
print(table)
if write:
    path = "docs/performance.md"
    doc = open(path).read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"scripts/bench.sh: {path} has no {begin} … {end} section to write the table into")
    doc = doc[:doc.index(begin) + len(begin)] + "\n" + table + "\n" + doc[doc.index(end):]
    open(path, "w").write(doc)
    open("docs/bench-load.svg", "w").write(chart([r for r in rounds if r[0] != "warm-up round"]))
    print(f"\n(written to {path} and docs/bench-load.svg)")
EOF
