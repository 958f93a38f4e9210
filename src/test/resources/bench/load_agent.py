#!/usr/bin/env python3
"""A light ACP agent for the load benchmark (a JVM per thread would measure the JVMs, not the
gateway). Each prompt: N text chunks stamped with their send time in epoch microseconds, PAUSE ms
apart (default 5; a prompt "go P" says P), then 5 permission requests one after another; it reports their round trips (ns) as a
chunk "RTTS:[...]" and ends the turn. A prompt "hold K" asks K permissions at once and waits for them
(the gateway cancels them when it stops); "big K" sends K chunks of 64 KiB each and ends the turn."""
import json
import sys
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
PAUSE = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.005
out_lock = threading.Lock()
waiting = {}
next_id = [0]


def send(message):
    line = json.dumps(message, separators=(",", ":"))
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def chunk(text):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "load", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})


def request(method, params):
    with out_lock:
        rid = next_id[0]
        next_id[0] += 1
    event = threading.Event()
    waiting[rid] = [event, None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    event.wait()
    return waiting.pop(rid)[1]


def hold(count):
    for i in range(count):
        with out_lock:
            rid = next_id[0]
            next_id[0] += 1
        send({"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": {
            "sessionId": "load", "toolCall": {"toolCallId": "hold-%d" % i, "title": "Edit", "kind": "edit"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}})


def big(rid, count):
    block = "x" * 65536
    for i in range(count):
        chunk(block)
    send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})


# A stamped chunk's line, formatted without json (the agents share two cores with the gateway).
STAMPED = ('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"load","update":'
           '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"T%d "}}}}\n')


def prompt(rid, pause):
    for i in range(N):
        with out_lock:
            sys.stdout.write(STAMPED % (time.time_ns() // 1000))
            sys.stdout.flush()
        time.sleep(pause)
    rtts = []
    for i in range(5):
        t0 = time.monotonic_ns()
        request("session/request_permission", {"sessionId": "load", "toolCall": {
            "toolCallId": "load-%d" % i, "title": "Edit", "kind": "edit"}, "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"}]})
        rtts.append(time.monotonic_ns() - t0)
    chunk("RTTS:" + json.dumps(rtts))
    send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})


for line in sys.stdin:
    m = json.loads(line)
    method = m.get("method")
    if method is None:
        entry = waiting.get(m.get("id"))
        if entry:
            entry[1] = m
            entry[0].set()
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"sessionId": "load"}})
    elif method == "session/prompt":
        text = "".join(b.get("text", "") for b in m["params"].get("prompt", []))
        if text.startswith("hold "):
            hold(int(text[5:]))
        elif text.startswith("big "):
            threading.Thread(target=big, args=(m["id"], int(text[4:])), daemon=True).start()
        else:
            # "go P": chunks P ms apart (else the pace given on the command line)
            pause = float(text[3:]) / 1000 if text.startswith("go ") else PAUSE
            threading.Thread(target=prompt, args=(m["id"], pause), daemon=True).start()
