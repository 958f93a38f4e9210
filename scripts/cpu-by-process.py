#!/usr/bin/env python3
"""CPU of a test run by kind of process (test JVMs, Chromium, the agents and plugins they start, ...).

Samples /proc twice a second until stopped (SIGTERM or Ctrl-C), then writes, per kind, the CPU the
processes used while it ran and the CPU of the children they reaped (a test JVM's agent processes
that ended between two samples are only there). Linux only. Usage (docs/reliability.md):
    scripts/cpu-by-process.py target/cpu.txt & mvn -B -o surefire:test; kill %1
"""
import collections
import os
import signal
import sys
import time

HZ = os.sysconf('SC_CLK_TCK')


def kind(comm, args):
    exe = os.path.basename(args[0]) if args and args[0] else comm
    if 'chrom' in comm or 'chrom' in exe:
        return 'chromium and chromedriver'
    if exe == 'java':
        line = ' '.join(args)
        if 'surefire' in line:
            return 'test JVM'
        if 'switchboard.jar' in line:
            return 'gateway JVM (the jar)'
        if 'plexus' in line:
            return 'maven'
        mains = [a for a in args[1:] if a[:1] != '-' and ':' not in a and '/' not in a]
        return 'java ' + (mains[0] if mains else '?')
    if exe == 'node':
        return 'node ' + (os.path.basename(args[1]) if len(args) > 1 else '')
    return comm


def snapshot():
    seen = {}
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/stat') as f:
                stat = f.read()
            with open(f'/proc/{pid}/cmdline') as f:
                args = f.read().split('\0')
        except OSError:
            continue  # gone meanwhile
        comm = stat[stat.index('(') + 1:stat.rindex(')')]
        fields = stat[stat.rindex(')') + 2:].split()
        own, reaped = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
        seen[(pid, fields[19])] = (own, reaped, kind(comm, args))  # keyed by pid and start time
    return seen


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else '/dev/stdout'
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    before, last = snapshot(), {}
    try:
        while not stopped:
            last.update(snapshot())
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    own, reaped, count = collections.Counter(), collections.Counter(), collections.Counter()
    for key, (o, r, k) in last.items():
        o0, r0, _ = before.get(key, (0, 0, k))
        own[k] += (o - o0) / HZ
        reaped[k] += (r - r0) / HZ
        count[k] += 1
    with open(out, 'w') as f:
        f.write(f"{'own CPU':>9} {'reaped':>9} {'procs':>6}  kind\n")
        for k, s in own.most_common(25):
            f.write(f'{s:8.1f}s {reaped[k]:8.1f}s {count[k]:6d}  {k}\n')


if __name__ == '__main__':
    main()
