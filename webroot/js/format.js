// Words and shapes the page shows, from what the gateway sends: pure functions, no DOM (Node's
// tests import this module).

export const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '');

// Paths inside a thread's workspace are long and alike: show them from the workspace on.
export function shortPath(path) {
  const m = /\/workspaces\/[^/]+\/(.*)$/.exec(path || '');
  return m ? m[1] : path;
}

// What a tool call will run, when its input says: the argv in full and where (agents differ in shape).
export function commandOf(input) {
  if (!input || typeof input !== 'object') return null;
  let command = null;
  if (Array.isArray(input.command)) command = input.command.join(' ');
  else if (typeof input.command === 'string') {
    command = input.command + (Array.isArray(input.args) && input.args.length ? ' ' + input.args.join(' ') : '');
  } else if (typeof input.cmd === 'string') command = input.cmd;
  if (!command) return null;
  return { command, cwd: input.cwd || input.workdir || input.directory || null };
}

// An ACP content block as Markdown text (images and audio are drawn apart).
export function blockText(c) {
  if (!c) return '';
  if (c.type === 'text') return c.text || '';
  if (c.type === 'resource_link') return '[' + (c.name || c.uri) + '](' + c.uri + ')';
  if (c.type === 'resource') return c.resource?.text || '';
  return '';
}

export function stopText(reason) {
  return { cancelled: 'Stopped.', max_tokens: 'The agent hit its token limit.', refusal: 'The agent refused.',
    max_turn_requests: 'The agent hit its request limit.', error: 'The turn failed.' }[reason] || 'Turn ended: ' + reason;
}

// Why a question ended without an answer, in words: `words` is the gateway's own list (GET
// /api/reasons, io.switchboard.permission.CancelReason); a slug it does not know is read as words.
export const reasonText = (words, slug) => (words && Object.hasOwn(words, slug) ? words[slug]
  : slug ? slug.replace(/-/g, ' ') : 'no reason given');

export function agentName(agents, id) {
  return ((agents || []).find((a) => a.id === id) || { name: id || '' }).name;
}

// The agent's name, and in a cluster the node it runs on.
export function agentLabel(agents, info) {
  return agentName(agents, info.agent) + (info.node ? ' \u00b7 ' + info.node : '');
}

// How full the agent's context window is (and what it cost, when it says); null when unknown.
export function usageText(u) {
  if (!u || typeof u.used !== 'number' || typeof u.size !== 'number' || u.size <= 0) return null;
  const k = (n) => (n >= 1000 ? Math.round(n / 1000) + 'k' : String(n));
  let text = k(u.used) + ' / ' + k(u.size) + ' tokens';
  // The currency as the Usage view shows it (the gateway keeps it upper case): "usd" and "USD" are one.
  if (u.cost && typeof u.cost.amount === 'number') text += ' · ' + u.cost.amount.toFixed(2) + ' ' + String(u.cost.currency || '').toUpperCase();
  return text;
}

export const titleWithCount = (total) => (total ? '(' + total + ') ' : '') + 'Switchboard';

// What the composer's Enter does, said where it is true: a touch keyboard's Enter breaks the line
// (a phone has no Shift to hold), so there Send sends.
export const composerHint = (touch) => (touch
  ? 'Message the agent (tap Send to send; Enter breaks the line)'
  : 'Message the agent (Enter sends, Shift+Enter breaks the line)');
export const keysHint = (n) => (n ? 'Keys: Alt+1' + (n > 1 ? '…Alt+' + n : '') + ', in this order' : '');

// Who answered a question, as its card says it: "alice on telegram", "web".
export function answeredBy(by) {
  return by ? (by.user ? by.user + ' on ' : '') + by.surface : 'someone';
}

export function exitText(exitStatus) {
  const x = exitStatus || {};
  return x.signal ? 'Stopped by ' + x.signal : 'Exit code ' + x.exitCode;
}

export function agentExitedText(e) {
  return 'The agent exited' + (e.signal ? ' (' + e.signal + ')' : e.code !== undefined ? ' with code ' + e.code : '')
    + '. The next message starts it again.';
}

// The agent's slash commands that complete a draft of "/" and a word.
export function commandsMatching(text, commands) {
  const m = /^\/(\S*)$/.exec(text);
  return m && commands ? commands.filter((c) => c.name.startsWith(m[1])) : [];
}

export const base64Bytes = (dataUrl) => Math.floor((dataUrl.length - dataUrl.indexOf(',') - 1) * 3 / 4);

const lines = (text) => {
  const all = text.split('\n');
  if (all.length > 1 && all[all.length - 1] === '') all.pop();
  return all;
};

// A line diff (longest common subsequence), enough for the edits agents propose: rows of
// {kind: 'add' | 'del' | null, text}. A new file is all added; one too large to compare is shown as it is.
export function diffRows(oldText, newText) {
  const b = lines(newText ?? '');
  if (oldText == null) return b.map((line) => ({ kind: 'add', text: '+ ' + line }));
  const a = lines(oldText);
  if (a.length * b.length > 4_000_000) return b.map((line) => ({ kind: null, text: '  ' + line }));
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const rows = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { rows.push({ kind: null, text: '  ' + a[i] }); i++; j++; }
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) { rows.push({ kind: 'add', text: '+ ' + b[j] }); j++; }
    else { rows.push({ kind: 'del', text: '- ' + a[i] }); i++; }
  }
  return rows;
}

// Data the page may draw: the kinds it expects, and base64 that looks like base64.
export const isImage = (mimeType, data) => /^image\/(png|jpeg|gif|webp)$/.test(mimeType || '') && /^[A-Za-z0-9+/=]+$/.test(data || '');
export const isAudio = (mimeType, data) => /^audio\/[\w.+-]+$/.test(mimeType || '') && /^[A-Za-z0-9+/=]+$/.test(data || '');
export const isPreview = (url) => typeof url === 'string' && /^data:image\/(png|jpeg|webp|gif);base64,[A-Za-z0-9+/=]+$/.test(url);
