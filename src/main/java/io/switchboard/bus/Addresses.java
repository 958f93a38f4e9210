package io.switchboard.bus;

/**
 * Every event-bus address the rooms use, in one place. docs/event-bus.md documents each body.
 *
 * <p>Commands are request/reply and fail with an {@link ErrorCode}; facts are published.
 */
public final class Addresses {
  private Addresses() {}

  // permission room: commands
  /** Register a request; the reply arrives only when the request ends (send with {@link Bus#untilEnded()}). */
  public static final String PERMISSION_REGISTER = "sb.permission.register";
  /** Answer a pending request from a surface. */
  public static final String PERMISSION_ANSWER = "sb.permission.answer";
  /** List the pending requests (cards), optionally of one thread. */
  public static final String PERMISSION_PENDING = "sb.permission.pending";
  /** Cancel the whole pending table (reason shutdown); replies once the ledger has it. */
  public static final String PERMISSION_SHUTDOWN = "sb.permission.shutdown";
  /**
   * Once every room is up: publish the end facts of the requests voided at start (a fact published
   * before the surfaces and metrics exist reaches nobody).
   */
  public static final String PERMISSION_ANNOUNCE_VOIDED = "sb.permission.announce-voided";
  /**
   * {@code {threadId, generation, toolCallId}}: the agent withdrew its question ({@code $/cancel_request}):
   * the request of that process and tool call ends {@code withdrawn}.
   */
  public static final String PERMISSION_WITHDRAW = "sb.permission.withdraw";
  /**
   * {@code {generation, elicitationId}}: the agent says a URL question is complete
   * ({@code elicitation/complete}): that process's question still waiting ends {@code completed}.
   */
  public static final String PERMISSION_COMPLETE = "sb.permission.complete";
  /** {@code {ruleId, by}}: revokes a rule (a new version); the very next request no longer sees it. */
  public static final String PERMISSION_RULES_REVOKE = "sb.permission.rules.revoke";
  /** Counts and the age of the oldest pending request; also a liveness probe. */
  public static final String PERMISSION_STATUS = "sb.permission.status";

  // permission room: facts it publishes
  public static final String PERMISSION_SHOWN = "sb.permission.shown";
  public static final String PERMISSION_RESOLVED = "sb.permission.resolved";
  public static final String PERMISSION_CANCELLED = "sb.permission.cancelled";
  /**
   * A step of a request's attention plan was done ({@code {requestId, threadId, step, at, waitedMs,
   * pushed}}; step {@code push}, {@code remind} or {@code escalate}; {@code pushed}: the devices it
   * went to): /metrics counts it, and pages highlight a reminded or escalated card again.
   */
  public static final String PERMISSION_ATTENTION = "sb.permission.attention";

  // facts other rooms publish and the permission room hears
  public static final String SURFACE_CLOSED = "sb.surface.closed";
  public static final String SESSION_CANCELLED = "sb.session.cancelled";
  public static final String AGENT_EXITED = "sb.agent.exited";

  // store room: commands
  public static final String STORE_LEDGER_APPEND = "sb.store.ledger.append";
  public static final String STORE_LEDGER_END = "sb.store.ledger.end";
  public static final String STORE_LEDGER_NOTE = "sb.store.ledger.note";
  /** {@code {requestId, step, at, card, text?, escalateTo?}}: one attention step, at most once (reply {@code done}). */
  public static final String STORE_LEDGER_ATTEND = "sb.store.ledger.attend";
  /** The browsers' push subscriptions: save or update one, forget one, list them, get one (push room). */
  public static final String STORE_PUSH_SUBSCRIBE = "sb.store.push.subscribe";
  public static final String STORE_PUSH_UNSUBSCRIBE = "sb.store.push.unsubscribe";
  public static final String STORE_PUSH_LIST = "sb.store.push.list";
  public static final String STORE_PUSH_GET = "sb.store.push.get";
  /** Rules (append-only versions): one version, the config's rules at start, every rule with its use. */
  public static final String STORE_RULES_APPEND = "sb.store.rules.append";
  public static final String STORE_RULES_SYNC = "sb.store.rules.sync";
  public static final String STORE_RULES_LIST = "sb.store.rules.list";

  // push room
  /** {@code {}} → {@code {publicKey}}: the VAPID public key a page subscribes with (base64url). */
  public static final String PUSH_KEY = "sb.push.key";
  /** Fact: one push was sent ({@code {status, kind}}; status DELIVERED, GONE, TOO_LARGE, RETRY_AFTER, FAILED). */
  public static final String PUSH_SENT = "sb.push.sent";
  public static final String STORE_LEDGER_VOID_PENDING = "sb.store.ledger.void-pending";
  public static final String STORE_LEDGER_GET = "sb.store.ledger.get";
  public static final String STORE_LEDGER_LIST = "sb.store.ledger.list";
  public static final String STORE_HEALTH = "sb.store.health";
  public static final String STORE_THREAD_SAVE = "sb.store.thread.save";
  public static final String STORE_THREAD_ROUTE = "sb.store.thread.route";
  public static final String STORE_THREAD_LIST = "sb.store.thread.list";
  /** Appends what a person did to a thread's work (commit, merge, discard) to the project audit. */
  public static final String STORE_PROJECT_ACTION = "sb.store.project.action";
  /** A thread's project audit, oldest first. */
  public static final String STORE_PROJECT_ACTIONS = "sb.store.project.actions";
  /** {@code {threadId}}: removes the thread's row, routes and transcript (the ledger keeps its requests). */
  public static final String STORE_THREAD_DELETE = "sb.store.thread.delete";
  /** {@code {threadId, agentId, currency, total, at?}} → {@code {added, threadCost}}: an agent's reported cost. */
  public static final String STORE_USAGE_COST = "sb.store.usage.cost";
  /** {@code {days?}} → {@code {days: [{day, agentId, currency, amount}]}}: cost per day and agent, newest first. */
  public static final String STORE_USAGE_DAYS = "sb.store.usage.days";
  /** {@code {agentId}} → {@code {supported, loggedOut}}: the agent logs out of its account (ACP {@code logout}). */
  public static final String AGENT_LOGOUT = "sb.agent.logout";
  /** Fact {@code {threadId, agentId, currency, added}}: what an agent's cost report added (for /metrics). */
  public static final String USAGE_COST = "sb.usage.cost";
  /**
   * Browser sessions by cookie hash: {@code {hash, createdAt, userAgent?, address?}} saves one,
   * {@code {hash}} or {@code {all: true}} forgets, the list answers {@code {sessions: [those]}}.
   */
  public static final String STORE_WEB_SESSION_SAVE = "sb.store.web-session.save";
  /** {@code {pluginId, chatId, messageId}} → {@code {seen}}: whether that chat message already became a prompt. */
  public static final String STORE_INBOUND_SEEN = "sb.store.inbound.seen";
  /** {@code {pluginId, chatId, messageId}}: that chat message became a prompt (kept 30 days). */
  public static final String STORE_INBOUND_MARK = "sb.store.inbound.mark";
  /** {@code {pluginId, chatId, scope}}: a plugin chat is a direct message ("dm") or a "group". */
  public static final String STORE_CHAT_SCOPE_SAVE = "sb.store.chat-scope.save";
  /** {@code {pluginId}} → {@code {scopes: {chatId: scope}}}. */
  public static final String STORE_CHAT_SCOPE_LIST = "sb.store.chat-scope.list";
  public static final String STORE_WEB_SESSION_FORGET = "sb.store.web-session.forget";
  public static final String STORE_WEB_SESSION_LIST = "sb.store.web-session.list";
  /** People (store/People): the first owner, made when there is none; {@code {} -> {person}}. */
  public static final String STORE_PEOPLE_OWNER = "sb.store.people.owner";
  /** {@code {personId?, name, roles, disabled?, by?} -> {person}}: adds or changes a person. */
  public static final String STORE_PEOPLE_SAVE = "sb.store.people.save";
  /** {@code {} -> {people: [{personId, name, roles, disabled, identities: [{kind, label}]}]}}. */
  public static final String STORE_PEOPLE_LIST = "sb.store.people.list";
  /** {@code {personId, kind, key, label?, detail?, by?}}: links an identity; one named by another is refused. */
  public static final String STORE_PEOPLE_LINK = "sb.store.people.link";
  /** {@code {kind, key, by?} -> {unlinked}}. */
  public static final String STORE_PEOPLE_UNLINK = "sb.store.people.unlink";
  /** {@code {kind, key} -> {person, identity}} (nulls when nobody has it). */
  public static final String STORE_PEOPLE_FIND = "sb.store.people.find";
  /** {@code {event, personId?, detail}}: one audit row. */
  public static final String STORE_AUDIT_APPEND = "sb.store.audit.append";
  /** {@code {limit?, personId?} -> {audit: [...]}}, the newest first. */
  public static final String STORE_AUDIT_LIST = "sb.store.audit.list";
  public static final String STORE_TRANSCRIPT_APPEND = "sb.store.transcript.append";
  public static final String STORE_TRANSCRIPT_READ = "sb.store.transcript.read";
  public static final String STORE_OUTBOX_ENQUEUE = "sb.store.outbox.enqueue";
  public static final String STORE_OUTBOX_ACK = "sb.store.outbox.ack";
  public static final String STORE_OUTBOX_PENDING = "sb.store.outbox.pending";
  /** A plugin process died: its delivered cards of still-pending requests are due again. */
  public static final String STORE_OUTBOX_REOPEN = "sb.store.outbox.reopen-cards";
  /** Published by the store after a commit that added outputs: {@code {pluginIds: [...]}}. */
  public static final String OUTBOX_READY = "sb.outbox.ready";

  // thread room: commands
  public static final String THREAD_CREATE = "sb.thread.create";
  /** The sessions an agent keeps for a project's folder (ACP session/list), from a process of its own. */
  public static final String AGENT_SESSIONS = "sb.agent.sessions";
  /** Starts a thread's agent and opens its session now (a session begun elsewhere: its history kept). */
  public static final String AGENT_OPEN = "sb.agent.open";
  /** A thread's work against its base branch (files, patch, commits ahead); its project's audit. */
  public static final String THREAD_CHANGES = "sb.thread.changes";
  /** A person commits a thread's worktree / merges it into its base branch / discards it. */
  public static final String THREAD_COMMIT = "sb.thread.commit";
  public static final String THREAD_MERGE = "sb.thread.merge";
  public static final String THREAD_DISCARD = "sb.thread.discard";
  /** The project room, on its own node only (the thread room there asks it). */
  public static final String PROJECT_WORKTREE_CREATE = "sb.project.worktree.create";
  public static final String PROJECT_CHANGES = "sb.project.changes";
  public static final String PROJECT_COMMIT = "sb.project.commit";
  public static final String PROJECT_MERGE = "sb.project.merge";
  public static final String PROJECT_DISCARD = "sb.project.discard";
  /** A person keeps a thread's branch: its work committed, its worktree removed, the branch left unmerged. */
  public static final String PROJECT_KEEP = "sb.project.keep";
  public static final String THREAD_KEEP = "sb.thread.keep";
  /** After a turn: the worktree recorded under refs/switchboard/checkpoints/<thread>, the branch untouched. */
  public static final String PROJECT_CHECKPOINT = "sb.project.checkpoint";
  /** Published when a thread is created (its row saved) and when it gets its title: as sb.thread.get answers. */
  public static final String THREAD_CHANGED = "sb.thread.changed";
  public static final String THREAD_LIST = "sb.thread.list";
  /** How many threads, and (cluster mode) how many thread facts this node published. */
  public static final String THREAD_STATUS = "sb.thread.status";
  public static final String THREAD_GET = "sb.thread.get";
  public static final String THREAD_ATTACH = "sb.thread.attach";
  public static final String THREAD_DETACH = "sb.thread.detach";
  public static final String THREAD_PROMPT = "sb.thread.prompt";
  public static final String THREAD_CANCEL = "sb.thread.cancel";
  /** {@code {threadId, title}}: a person renames the thread; sb.thread.changed tells every page. */
  public static final String THREAD_RENAME = "sb.thread.rename";
  /** {@code {threadId, archived}}: hides a thread from the lists (or restores it); refused while it is at work. */
  public static final String THREAD_ARCHIVE = "sb.thread.archive";
  /** {@code {threadId}}: deletes an archived, idle thread that no chat follows: its transcript and workspace. */
  public static final String THREAD_DELETE = "sb.thread.delete";
  /** {@code {threadId, modeId}}: the thread's agent switches to that ACP session mode. */
  public static final String THREAD_SET_MODE = "sb.thread.set-mode";
  /** {@code {threadId, configId, value}}: the thread's agent takes that session config value. */
  public static final String THREAD_SET_CONFIG = "sb.thread.set-config";
  public static final String THREAD_HISTORY = "sb.thread.history";
  /** From the agent room: an event to number, persist and publish. */
  public static final String THREAD_RECORD = "sb.thread.record";
  /** From the agent room: the ACP session id a thread's agent now uses. */
  public static final String THREAD_SESSION = "sb.thread.session";

  /** Where a thread's numbered events are published for surfaces. */
  public static String threadEvents(String threadId) {
    return "sb.thread." + threadId + ".events";
  }

  // agent room: commands
  public static final String AGENT_PROMPT = "sb.agent.prompt";
  public static final String AGENT_CANCEL = "sb.agent.cancel";
  public static final String AGENT_SET_MODE = "sb.agent.set-mode";
  public static final String AGENT_SET_CONFIG = "sb.agent.set-config";
  public static final String AGENT_STOP = "sb.agent.stop";
  public static final String AGENT_STATUS = "sb.agent.status";

  // plugin room: commands
  /** Each plugin's state (running, backing off, given up), for /readyz. */
  public static final String PLUGIN_STATUS = "sb.plugin.status";
  /** {@code {code, personId, name?} -> {plugin, userId}}: links the chat account a /link code names (edge-local). */
  public static final String PLUGIN_LINK_REDEEM = "sb.plugin.link.redeem";

  // metrics room: commands
  /** The Prometheus text of every metric, refreshed from the rooms' status at the time of asking. */
  public static final String METRICS_SCRAPE = "sb.metrics.scrape";
  public static final String STORE_OUTBOX_STATS = "sb.store.outbox.stats";

  // cluster mode: facts this node's cluster watcher publishes to this node only
  /** {@code {event: "left"|"joined", node, role, incarnation, address}}: a member of the cluster left or joined. */
  public static final String CLUSTER_MEMBER = "sb.cluster.member";
  /** This node only: {@code {} -> {members: [{node, role, incarnation, address}]}}, the members now. */
  public static final String CLUSTER_MEMBERS = "sb.cluster.members";

  // cluster mode, an edge node: its one router to the agent nodes (cluster.EdgeRouter), this node only
  /**
   * {@code {address, body, node?, timeoutMs}} -> the routed reply: a command of a surface room, sent
   * to the agent node that owns it ({@code node}: to that node), or to every one, the answers merged.
   */
  public static final String EDGE_ASK = "sb.edge.ask";
  /** {@code {node}} -> that node's {@code sb.thread.list} reply and {@code vanished}: its threads, listed again. */
  public static final String EDGE_RELIST = "sb.edge.relist";
  /** A node's {@code sb.permission.pending} reply: what a reconciliation heard up to (its {@code seq}). */
  public static final String EDGE_HEARD = "sb.edge.heard";
  /** {@code {requestId}}: a request whose end fact was missed ended; the router forgets its owner. */
  public static final String EDGE_ENDED = "sb.edge.ended";
  /** {@code {node, requestIds}} -> {@code {requestIds}}: those of the ids whose request that node owns. */
  public static final String EDGE_OWNED = "sb.edge.owned";
  /** {@code {}} -> {@code {live: [node...]}}: the agent nodes that are members now. */
  public static final String EDGE_NODES = "sb.edge.nodes";
  /** Fact: an agent node's presence changed; the member fact with {@code live}, the agent nodes after it. */
  public static final String EDGE_MEMBER = "sb.edge.member";
  /** Fact: {@code {node, kind: "permission"|"thread"}}: some of that node's facts of the kind were missed. */
  public static final String EDGE_GAP = "sb.edge.gap";

  /**
   * An agent node's own copy of a command address: in a cluster the edges send each command to the
   * node that owns its thread or request, never to a plain address two nodes serve.
   */
  public static String onNode(String node, String address) {
    return "sb.node." + node + address.substring("sb".length());
  }
}
