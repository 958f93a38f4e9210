package io.switchboard.plugin;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.PluginSpec;
import io.switchboard.jsonrpc.JsonRpcError;
import io.switchboard.permission.ChatApproval;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;

/**
 * What a plugin's chats say: prompts (who may prompt, a message taken once, the route's lane run
 * one prompt at a time, each answered when its own turn ended) and the commands the gateway answers
 * itself ({@code /new}, {@code /stop}, {@code /status}, {@code /help}).
 */
final class ChatInbound {
  private static final Logger log = PluginSupervisor.log;
  private static final String HELP = "Commands: /new starts a new conversation (/new <project> in a project), "
      + "/projects lists the projects, /diff sums up the conversation's changes, /merge merges them into their base "
      + "branch, /stop stops the agent's current turn, /status shows this chat's thread and agent, /rules lists the "
      + "rules that answer for you, /revoke <id> takes a grant back, /link links this chat account to your person "
      + "on the page, /help shows this text.";

  private final PluginSupervisor plugin;
  private final OutboxDelivery outbox;
  private final PluginRoom room;
  private final PluginSpec spec;
  private final Dialect dialect;
  private final String tag;
  /** Platform messages that came again and were answered without a turn. */
  private long duplicates;
  /** Chat messages (chatId NUL messageId) in the lane or being checked: a copy arriving meanwhile is a duplicate. */
  private final Set<String> inboundInFlight = new HashSet<>();
  /** threadId -> the ACP session id this plugin last saw it in (a null value: none yet); absent: not known. */
  private final Map<String, String> sessionSeen = new HashMap<>();

  ChatInbound(PluginSupervisor plugin, OutboxDelivery outbox) {
    this.plugin = plugin;
    this.outbox = outbox;
    this.room = plugin.room;
    this.spec = plugin.spec;
    this.dialect = plugin.dialect;
    this.tag = plugin.tag;
  }

  long duplicates() {
    return duplicates;
  }

  /** {@code session/cancel}: stops the chat's turn. */
  void cancel(JsonObject params) {
    Route r = plugin.knownRoute(dialect.cancelledChat(params));
    if (r != null && r.threadId != null) {
      room.ask(Addresses.THREAD_CANCEL, new JsonObject().put("threadId", r.threadId));
    }
  }

  /** {@code session/prompt}: answered when the prompt's own turn ended, or at once (a command, a refusal). */
  Future<Object> prompt(Generation g, JsonObject params) {
    Dialect.Inbound in;
    try {
      in = dialect.prompt(params);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, e.getMessage()));
    }
    // Whenever this prompt is answered (its turn's end, a command's reply, a refusal), the SDK rejects
    // the chat's cards it still shows. Marked here, before the answer is written (the peer writes it
    // after this callback, on the same event loop), so no card slips in between.
    return prompt(g, in).onComplete(x -> {
      Route r = plugin.knownRoute(in.chatId());
      if (r != null) {
        outbox.expectAutoRejects(r);
      }
    });
  }

  private Future<Object> prompt(Generation g, Dialect.Inbound in) {
    if (in.text().strip().equalsIgnoreCase("/link")) {
      return link(in); // anyone may ask: a code links nothing until a signed-in person enters it
    }
    if (!spec.mayPrompt(in.senderId())) {
      return stranger(in);
    }
    Route r = heardIn(in);
    r.lastSender = in.senderId();
    // The SDK rejects the cards it shows in a chat when the chat's next prompt starts: not a person's answer.
    outbox.expectAutoRejects(r);
    String text = in.text().trim();
    if (text.isEmpty()) {
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INVALID_PARAMS, "the prompt has no text"));
    }
    String key = in.messageId() == null ? null : in.chatId() + "\u0000" + in.messageId();
    if (key != null && inboundInFlight.contains(key)) {
      Route.Waiting taken = waitingFor(r, in.messageId());
      if (taken != null && taken.generation != g.number) {
        return join(g, r, taken, in);
      }
      return duplicate(in); // a copy of a message waiting in the lane or being handled
    }
    if (text.startsWith("/")) {
      // Commands are taken once too: a redelivered /stop or /new must not act again.
      Future<Object> handled = seen(in).compose(before -> before ? duplicate(in)
          : command(r, text.split("\\s+")[0].toLowerCase(), argument(text), in).onSuccess(x -> remember(in)));
      r.commands = handled;
      return handled;
    }
    if (r.typedAnswer != null) {
      return typedAnswer(r, r.typedAnswer, text, in);
    }
    if (r.lane.size() >= Route.LANE_CAPACITY) {
      // Not -32000: ACP reserves that for "authentication required", and a plugin would ask its user to log in.
      return Future.failedFuture(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "route is busy: "
          + Route.LANE_CAPACITY + " messages of this chat are already waiting; wait, or send /stop"));
    }
    // Into the lane at once, in arrival order (its capacity counts it); whether the platform sent it
    // before is settled before its turn (pump).
    if (key != null) {
      inboundInFlight.add(key);
    }
    Promise<Object> done = Promise.promise();
    r.lane.add(new Route.Waiting(in, done, seen(in), g.number));
    pump(r);
    return done.future().onComplete(x -> {
      if (key != null) {
        inboundInFlight.remove(key);
      }
    });
  }

  /** The chat's prompt (running or in the lane) of platform message {@code messageId}, or null. */
  private static Route.Waiting waitingFor(Route r, String messageId) {
    if (r.current != null && messageId.equals(r.current.inbound().messageId())) {
      return r.current;
    }
    return r.lane.stream().filter(w -> messageId.equals(w.inbound().messageId())).findFirst().orElse(null);
  }

  /**
   * The platform sent again a message whose prompt a process that died had taken (it never confirmed
   * it there). The new process's prompt takes that one over: it is answered when that prompt's turn
   * ends, and a turn already running shows its text so far in it, then streams on into it — the chat
   * gets the turn's reply once, in the message the platform shows as waiting, and no output of the
   * turn arrives after its prompt was answered.
   */
  private Future<Object> join(Generation g, Route r, Route.Waiting taken, Dialect.Inbound in) {
    log.info("[{}] message {} of chat {} came again after its process died: its prompt goes on in this one", tag,
        in.messageId(), in.chatId());
    taken.generation = g.number;
    if (taken == r.current) {
      r.target = in.target(); // the turn's outputs now reply to the copy the new process holds
      plugin.turns().joined(g, r);
    }
    return taken.done().future();
  }

  /**
   * The chat's route, as a message of it (let in or not) says: its outputs reply to that message
   * unless a turn of the chat runs, and whether it is a direct message or a group.
   */
  private Route heardIn(Dialect.Inbound in) {
    Route r = plugin.route(in.chatId());
    if (r.current == null) {
      r.target = in.target(); // while a turn runs, its outputs keep replying to its own message
    }
    noteScope(r, in.scope());
    return r;
  }

  /**
   * What a chat's message says of it (a direct message or a group), kept across restarts: a restored
   * chat of a dialect that cannot say who taps is a group until known otherwise.
   */
  private void noteScope(Route r, String scope) {
    if (!scope.equals(r.scope)) {
      r.scope = scope;
      room.ask(Addresses.STORE_CHAT_SCOPE_SAVE, new JsonObject().put("pluginId", spec.id()).put("chatId", r.chatId)
              .put("scope", scope))
          .onFailure(err -> log.error("[{}] the kind of chat {} could not be saved: {}", tag, r.chatId, err.getMessage()));
    }
  }

  /**
   * Whether a platform message was taken before — the platform delivered it again after the plugin
   * crashed. Messages are remembered once their prompt is in the transcript (durably,
   * {@code plugin_inbound}), so one the gateway never recorded (it crashed first) runs when it comes
   * again: never lost, rarely twice.
   */
  private Future<Boolean> seen(Dialect.Inbound in) {
    return in.messageId() == null ? Future.succeededFuture(false)
        : room.ask(Addresses.STORE_INBOUND_SEEN, message(in))
            .map(m -> m.getBoolean("seen"))
            .otherwise(false); // a read that fails must not drop the message
  }

  /** The message is taken (in the transcript, or a command done): its redelivery will start nothing. */
  private void remember(Dialect.Inbound in) {
    if (in.messageId() != null) {
      room.ask(Addresses.STORE_INBOUND_MARK, message(in))
          .onFailure(err -> log.error("[{}] message {} of chat {} could not be remembered: {}", tag,
              in.messageId(), in.chatId(), err.getMessage()));
    }
  }

  /** The store's key of a platform message. */
  private JsonObject message(Dialect.Inbound in) {
    return new JsonObject().put("pluginId", spec.id()).put("chatId", in.chatId()).put("messageId", in.messageId());
  }

  private Future<Object> duplicate(Dialect.Inbound in) {
    duplicates++;
    log.info("[{}] message {} of chat {} came again (a redelivery): already taken, no second turn", tag,
        in.messageId(), in.chatId());
    return Future.succeededFuture(new JsonObject().put("stopReason", "end_turn"));
  }

  /**
   * Someone not on the plugin's list of users wrote: nothing starts. They are told their id and how
   * the operator admits them, and the knock is kept for the web to show (the operator sees who
   * asked); the prompt is answered {@code refusal}.
   */
  /**
   * {@code /link}: a code that names this chat account for two minutes, shown in a direct message
   * only (in a group anyone could type it on their own page and have this account answer as them).
   */
  private Future<Object> link(Dialect.Inbound in) {
    Route r = heardIn(in);
    String words;
    if (in.senderId() == null) {
      words = "This plugin does not say who writes, so this chat account cannot be linked to a person.";
    } else if (!"dm".equals(r.scope)) {
      words = "Send /link to me in a direct message: a code shown in a group could be used by anyone in it.";
    } else {
      String code = room.linkCodes().issue(spec.id(), in.senderId(), in.chatId());
      log.info("[{}] a link code for {} (valid {} s)", tag, in.senderId(), LinkCodes.LIFETIME_MS / 1000);
      words = "Your link code is " + code + ". Sign in to the Switchboard page and enter it under People "
          + "(Link a chat account) within 2 minutes: this chat account then answers as you.";
    }
    return outbox.say(r, words).map(x -> new JsonObject().put("stopReason", "end_turn"));
  }

  private Future<Object> stranger(Dialect.Inbound in) {
    String who = in.senderId() == null ? "(unknown)"
        : in.senderId().length() > 200 ? in.senderId().substring(0, 200) + "…" : in.senderId();
    log.warn("[{}] {} ({}) in chat {} may not prompt: not in plugins[{}].users", tag, who, in.senderName(),
        in.chatId(), spec.id());
    room.knocked(new JsonObject().put("plugin", spec.id()).put("userId", who).put("name", in.senderName())
        .put("chatId", in.chatId()).put("at", System.currentTimeMillis()));
    Route r = heardIn(in);
    return outbox.say(r, "You cannot use this agent yet. Your id here is " + who + ". To let you in, the operator adds \""
        + who + "\" to plugins[" + spec.id() + "].users in the Switchboard config and restarts it.")
        .map(x -> new JsonObject().put("stopReason", "refusal"));
  }

  // ---- commands ----

  /** What follows a command's word ("" when nothing does). */
  private static String argument(String text) {
    String[] parts = text.strip().split("\\s+", 2);
    return parts.length < 2 ? "" : parts[1].strip();
  }

  /**
   * A question shown in this chat waits for text: the message is its answer, judged by the permission
   * room like a tap (its approvers) and checked against the question's form; a refusal is said in the
   * chat and the question still waits for the next message.
   */
  private Future<Object> typedAnswer(Route r, Route.TypedAnswer q, String text, Dialect.Inbound in) {
    JsonObject answer = new JsonObject().put("requestId", q.requestId()).put("optionId", "accept")
        .put("content", new JsonObject().put(q.field(), text)).put("surface", r.surface()).put("user", in.senderId())
        .put("chat", new ChatApproval(spec.approvers(), false, false, spec.requireLinked()).toJson());
    Future<String> said = room.people().principal(spec.id(), in.senderId())
        .compose(by -> room.ask(Addresses.PERMISSION_ANSWER, by == null ? answer : answer.put("by", by.toJson())))
        .map(ok -> {
          remember(in);
          if (r.typedAnswer == q) {
            r.typedAnswer = null;
          }
          return "Answered.";
        })
        .recover(err -> {
          ErrorCode code = ErrorCode.of(err);
          if (code == ErrorCode.ALREADY_ANSWERED || code == ErrorCode.UNKNOWN_REQUEST) {
            if (r.typedAnswer == q) {
              r.typedAnswer = null;
            }
            return Future.succeededFuture("That question had already ended (" + err.getMessage() + "). Send your "
                + "message again for the agent.");
          }
          return Future.succeededFuture("Not taken: " + err.getMessage() + (code == ErrorCode.NOT_APPROVER ? ""
              : ". Send your answer again."));
        });
    return said.compose(words -> outbox.say(r, words)).map(x -> new JsonObject().put("stopReason", "end_turn"));
  }

  private Future<Object> command(Route r, String command, String argument, Dialect.Inbound in) {
    String reply;
    switch (command) {
      case "/projects" -> reply = projectList();
      case "/diff" -> {
        return projectCommand(r, Addresses.THREAD_CHANGES, new JsonObject(), ChatInbound::diffSummary);
      }
      case "/merge" -> {
        // A chat has no Commit button: what is not committed yet is committed with the merge. Who may
        // merge is the rule of who may answer (ChatApproval), judged by the thread room.
        return projectCommand(r, Addresses.THREAD_MERGE, new JsonObject().put("surface", r.surface())
            .put("user", in.senderId()).put("commitFirst", true)
            .put("chat", new ChatApproval(spec.approvers() == null ? List.of() : spec.approvers(), false, false)
                .toJson()), result -> "Merged into " + result.getString("baseRef")
            + " as "
            + result.getString("commit").substring(0, 7) + ".");
      }
      case "/new" -> {
        if (!argument.isEmpty()) {
          String wanted = argument.equals("-") ? "" : argument;
          boolean known = wanted.isEmpty() || room.settings().project(wanted)
              .filter(p -> spec.agent() == null || p.allows(spec.agent())).isPresent();
          if (!known) {
            reply = "No project called " + argument + " here. " + projectList();
            break;
          }
          r.project = wanted;
        } else {
          r.project = null;
        }
        if (r.threadId != null) {
          room.ask(Addresses.THREAD_DETACH, new JsonObject().put("threadId", r.threadId).put("surface", r.surface()))
              .onFailure(err -> log.error("[{}] chat {} could not leave thread {}: {}", tag, r.chatId, r.threadId,
                  err.getMessage()));
          // The chat leaves the old thread's questions too: a card there is no longer answerable from it
          // (one only it could answer ends surface-gone).
          plugin.bus.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("surface", r.surface())
              .put("threadId", r.threadId));
        }
        r.threadId = null;
        leaveTurn(r);
        reply = "OK: your next message starts a new conversation" + (r.project == null ? "."
            : r.project.isEmpty() ? " in a scratch folder." : " in project " + r.project + ".");
      }
      case "/stop", "/cancel" -> {
        if (r.threadId != null) {
          room.ask(Addresses.THREAD_CANCEL, new JsonObject().put("threadId", r.threadId));
        }
        reply = r.threadId == null ? "Nothing to stop." : "Stopping the agent's turn.";
      }
      case "/status" -> {
        return (r.threadId == null ? Future.succeededFuture(new JsonObject())
            : room.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", r.threadId)))
            .map(t -> t.isEmpty() ? "No conversation yet: send a message to start one."
                : "Thread " + t.getString("threadId") + " with agent " + t.getString("agent")
                    + (t.getString("node") == null ? "" : " on " + t.getString("node"))
                    + (t.getBoolean("busy") ? ", working." : ", idle.") + " " + r.lane.size() + " messages waiting.")
            // In a cluster its agent node may be gone: the chat is told so, not left without an answer.
            .recover(err -> Future.succeededFuture("Thread " + r.threadId + " does not answer now: " + err.getMessage()))
            .compose(text -> outbox.say(r, text))
            .map(x -> new JsonObject().put("stopReason", "end_turn"));
      }
      case "/rules" -> {
        return room.ask(Addresses.STORE_RULES_LIST, new JsonObject()).map(ChatInbound::ruleList)
            .recover(err -> Future.succeededFuture("The rules cannot be read now: " + err.getMessage()))
            .compose(text -> outbox.say(r, text)).map(x -> new JsonObject().put("stopReason", "end_turn"));
      }
      case "/revoke" -> {
        if (argument.isEmpty()) {
          reply = "Send /revoke <id>: /rules lists the ids.";
          break;
        }
        // Taking a grant back only brings cards back: anyone who may use this chat may do it.
        return room.ask(Addresses.PERMISSION_RULES_REVOKE, new JsonObject().put("ruleId", argument)
                .put("by", in.senderId() + " on " + r.surface()))
            .map(rule -> "Revoked " + argument + " (" + rule.getString("words") + "): the next such request asks again.")
            .recover(err -> Future.succeededFuture("Not revoked: " + err.getMessage()))
            .compose(text -> outbox.say(r, text)).map(x -> new JsonObject().put("stopReason", "end_turn"));
      }
      case "/help" -> reply = HELP;
      default -> reply = "Unknown command " + command + ". " + HELP;
    }
    return outbox.say(r, reply).map(x -> new JsonObject().put("stopReason", "end_turn"));
  }

  /** The rules in force /rules lists, at most; the web chat's Rules view lists them all. */
  static final int RULES_LISTED = 20;
  /** The rules and grants that ended that /rules lists after them, the latest first. */
  static final int ENDED_LISTED = 5;
  /** /rules stays one message: Telegram, the tightest platform, takes 4096 characters. */
  static final int RULES_TEXT_MAX = 3500;

  /**
   * /rules: each rule in force, what it does, how often it answered and when last, and how to take
   * a grant back; then the last few that ended (revoked, expired, left the config), in brief.
   */
  static String ruleList(JsonObject reply) {
    return ruleList(reply, System.currentTimeMillis());
  }

  static String ruleList(JsonObject reply, long now) {
    List<JsonObject> all = reply.getJsonArray("rules").stream().map(o -> (JsonObject) o).toList();
    List<JsonObject> rules = all.stream().filter(r -> endedAt(r, now) == null).toList();
    List<JsonObject> ended = all.stream().filter(r -> endedAt(r, now) != null)
        .sorted(java.util.Comparator.comparingLong((JsonObject r) -> endedAt(r, now)).reversed())
        .limit(ENDED_LISTED).toList();
    StringBuilder out = new StringBuilder(rules.isEmpty()
        ? "No rules in force: every request the agent makes is a card for a person."
        : "Rules in force (the strictest matching one decides; anything else asks):");
    List<String> lines = new java.util.ArrayList<>();
    for (JsonObject r : rules) {
      lines.add(ruleWords(r) + " \u2014 " + useWords(r, now)
          + ("grant".equals(r.getString("source")) ? " (/revoke " + r.getString("ruleId") + ")" : " (config)"));
    }
    int shown = appendBounded(out, lines, RULES_LISTED, RULES_TEXT_MAX - 600);
    if (shown < rules.size()) {
      out.append("\n\u2026 and ").append(rules.size() - shown).append(" more: the web chat's Rules view lists all.");
    }
    if (!ended.isEmpty()) {
      out.append("\nEnded lately:");
      lines.clear();
      for (JsonObject r : ended) {
        Long revokedAt = r.getLong("revokedAt");
        String how = revokedAt == null ? "expired " + ago(endedAt(r, now), now)
            : "config".equals(r.getString("revokedBy")) ? "left the config " + ago(revokedAt, now)
            : "revoked " + ago(revokedAt, now)
                + (r.getString("revokedBy") == null ? "" : " by " + r.getString("revokedBy"));
        lines.add(ruleWords(r) + " \u2014 " + how + "; " + useWords(r, now));
      }
      appendBounded(out, lines, ENDED_LISTED, RULES_TEXT_MAX);
    }
    return out.toString();
  }

  /** When a rule stopped deciding (revoked, or its life ran out), or null while it is in force. */
  private static Long endedAt(JsonObject r, long now) {
    Long revokedAt = r.getLong("revokedAt");
    Long expiresAt = r.getLong("expiresAt");
    return revokedAt != null ? revokedAt : expiresAt != null && expiresAt <= now ? expiresAt : null;
  }

  /** "• g_1: allow execute `ls …`, this thread (t_1)". */
  private static String ruleWords(JsonObject r) {
    io.switchboard.rules.Rule rule = io.switchboard.rules.Rule.fromJson(r);
    return "\u2022 " + r.getString("ruleId") + ": " + rule.effect().key() + ' ' + rule.match().words() + ", "
        + rule.scope().words();
  }

  /** "used 3 times, last 5 min ago", "used 0 times". */
  private static String useWords(JsonObject r, long now) {
    long uses = r.getLong("uses", 0L);
    Long last = r.getLong("lastUsedAt");
    return "used " + uses + (uses == 1 ? " time" : " times") + (last == null ? "" : ", last " + ago(last, now));
  }

  private static String ago(long at, long now) {
    return io.switchboard.permission.Waiting.duration(now - at) + " ago";
  }

  /** Appends up to {@code most} lines while the text stays within {@code maxChars}; how many it appended. */
  private static int appendBounded(StringBuilder out, List<String> lines, int most, int maxChars) {
    int shown = 0;
    for (String line : lines) {
      if (shown == most || out.length() + 1 + line.length() > maxChars) {
        break;
      }
      out.append('\n').append(line);
      shown++;
    }
    return shown;
  }

  /** /projects: the configured projects, and how to start in one. */
  private String projectList() {
    var projects = room.settings().projects().stream()
        .filter(p -> spec.agent() == null || p.allows(spec.agent())).toList();
    if (projects.isEmpty()) {
      return "No projects are configured: conversations work in a scratch folder.";
    }
    StringBuilder out = new StringBuilder("Projects: ");
    projects.forEach(p -> out.append(p.id()).append(p.name().equals(p.id()) ? "" : " (" + p.name() + ")")
        .append(p.id().equals(room.settings().defaultProject()) ? " [default]" : "").append(", "));
    out.setLength(out.length() - 2);
    return out.append(". Send /new <project> to start a conversation in one (/new - for a scratch folder).")
        .toString();
  }

  /** A project command on this chat's thread, its answer (or refusal) said in the chat. */
  private Future<Object> projectCommand(Route r, String address, JsonObject body,
                                        java.util.function.Function<JsonObject, String> said) {
    if (r.threadId == null) {
      return outbox.say(r, "No conversation yet: send a message to start one.")
          .map(x -> new JsonObject().put("stopReason", "end_turn"));
    }
    return room.askSlow(address, body.put("threadId", r.threadId)).map(said)
        .recover(err -> Future.succeededFuture("Not done: " + err.getMessage()))
        .compose(text -> outbox.say(r, text))
        .map(x -> new JsonObject().put("stopReason", "end_turn"));
  }

  /** /diff: files and lines changed on the thread's branch against its base (not the patch: a chat is small). */
  static String diffSummary(JsonObject changes) {
    JsonArray files = changes.getJsonArray("files");
    if (files.isEmpty()) {
      return "No changes on " + changes.getString("branch") + " against " + changes.getString("baseRef") + ".";
    }
    int added = 0;
    int removed = 0;
    StringBuilder lines = new StringBuilder();
    for (Object o : files) {
      JsonObject f = (JsonObject) o;
      added += f.getInteger("added");
      removed += f.getInteger("removed");
      if (lines.length() < 1500) {
        // The label shows what a name hides (a direction override, a newline that fakes a line of this list).
        lines.append("\n").append(f.getString("label", f.getString("path"))).append(f.getBoolean("repository", false)
            ? " (a repository)" : f.getBoolean("binary") ? " (binary)"
            : " +" + f.getInteger("added") + " -" + f.getInteger("removed"));
      }
    }
    int total = changes.getInteger("filesTotal", files.size());
    return total + " files changed on " + changes.getString("branch") + " against "
        + changes.getString("baseRef") + " (+" + added + " -" + removed + "; " + changes.getInteger("ahead")
        + " commits, " + changes.getInteger("uncommitted") + " files not committed):" + lines;
  }

  // ---- the lane ----

  /** Runs the route's next prompt, one at a time. */
  private void pump(Route r) {
    if (r.current != null || r.lane.isEmpty()) {
      return;
    }
    Route.Waiting head = r.lane.peek();
    if (!head.seen().isComplete()) {
      head.seen().onComplete(x -> pump(r)); // settled in order: the head's turn comes first
      return;
    }
    r.lane.poll();
    if (head.seen().result()) {
      head.done().tryComplete(duplicate(head.inbound()).result());
      pump(r);
      return;
    }
    Route.Waiting w = head;
    r.current = w;
    r.target = w.inbound().target();
    r.turnsToWait = -1;
    r.turnEnds.clear();
    ensureThread(r, w.inbound())
        .compose(threadId -> room.people().principal(spec.id(), w.inbound().senderId())
            .compose(by -> room.ask(Addresses.THREAD_PROMPT, new JsonObject().put("threadId", threadId)
                .put("text", w.inbound().text()).put("surface", r.surface()).put("user", w.inbound().senderId())
                .put("promptedBy", by == null ? null : by.personId()))))
        .onSuccess(reply -> {
          remember(w.inbound()); // in the transcript now: the platform's redelivery of it starts nothing
          r.promptSeq = reply.getLong("seq");
          r.turnsToWait = reply.getInteger("ahead") + 1;
          turnEnded(r);
        })
        .onFailure(err -> {
          r.current = null;
          w.done().tryFail(new JsonRpcError(JsonRpcError.INTERNAL_ERROR, err.getMessage()));
          pump(r);
        });
  }

  private Future<String> ensureThread(Route r, Dialect.Inbound in) {
    if (r.threadId != null) {
      String threadId = r.threadId;
      return noteSession(threadId).map(threadId);
    }
    JsonObject create = new JsonObject().put("surface", r.surface()).put("startedBy", in.senderId());
    if (spec.agent() != null) {
      create.put("agent", spec.agent());
    }
    if (r.project != null) {
      create.put("project", r.project);
    }
    return room.askSlow(Addresses.THREAD_CREATE, create).map(m -> {
      r.threadId = m.getString("threadId");
      r.startedBy = in.senderId();
      sessionSeen.put(r.threadId, null); // its first session will be a new one
      room.follow(r.threadId);
      return r.threadId;
    });
  }

  // ---- the session a chat is in (_va/session_info) ----

  /**
   * The session a thread had before this plugin's chats prompt it (once per thread and gateway
   * run): a session its agent opens later is resumed if it is that one, new otherwise.
   */
  private Future<Void> noteSession(String threadId) {
    if (!dialect.tellsSession() || sessionSeen.containsKey(threadId)) {
      return Future.succeededFuture();
    }
    return room.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId))
        .onSuccess(t -> sessionSeen.putIfAbsent(threadId, t.getString("acpSessionId")))
        .<Void>mapEmpty()
        .otherwiseEmpty(); // not known: the session will count as resumed
  }

  /**
   * The thread's agent is answering (a turn's first live output): its session exists, and the thread
   * room has its id. Each attached chat that {@code g} was not told of that session yet is told now,
   * complete ({@code _va/session_info}: the SDK drops it if a field is missing); the chat's live output
   * waits meanwhile, so the info comes first (the SDK sends a file the agent links only from the
   * workspace it names). Told again after a {@code /new}, a new process, or an agent that crashed.
   */
  void sessionLive(Generation g, String threadId, List<Route> attached) {
    if (!dialect.tellsSession()) {
      return;
    }
    attached.forEach(r -> g.hold(r.chatId));
    room.ask(Addresses.THREAD_GET, new JsonObject().put("threadId", threadId)).onComplete(got -> {
      Dialect.Session s = got.succeeded() ? session(got.result()) : null;
      if (s == null) {
        log.warn("[{}] thread {}: its session is not known ({}); its chats are not told of it", tag, threadId,
            got.succeeded() ? "no session id yet" : got.cause().getMessage());
      }
      for (Route r : attached) {
        String told = s == null ? null : s.threadId() + "\u0000" + s.sessionId();
        boolean tell = told != null && threadId.equals(r.threadId) && !told.equals(g.toldSession.get(r.chatId));
        if (tell) {
          g.toldSession.put(r.chatId, told);
        }
        g.release(r.chatId, tell ? dialect.sessionInfo(r, s) : null);
      }
    });
  }

  /** The thread's agent exited on its own: the session it resumes next is told again. */
  void agentExited(String threadId) {
    Generation g = plugin.current();
    if (g != null) {
      g.toldSession.values().removeIf(told -> told.startsWith(threadId + "\u0000"));
    }
  }

  /** The session a thread is in, as {@code sb.thread.get} says; null while it has none. */
  private Dialect.Session session(JsonObject thread) {
    String threadId = thread.getString("threadId");
    String sessionId = thread.getString("acpSessionId");
    String agentId = thread.getString("agent");
    String workspace = thread.getString("workspace");
    if (threadId == null || sessionId == null || agentId == null || workspace == null) {
      return null;
    }
    boolean known = sessionSeen.containsKey(threadId);
    String before = sessionSeen.put(threadId, sessionId);
    String agentName = plugin.settings.agents().stream().filter(a -> a.id().equals(agentId) && a.name() != null)
        .map(a -> a.name()).findFirst().orElse(agentId);
    // The plugin resolves the path itself, from its own folder: it must be absolute. A thread's
    // workspace is its own folder, named by the thread.
    return new Dialect.Session(threadId, Path.of(workspace).toAbsolutePath().normalize().toString(), threadId,
        sessionId, !known || sessionId.equals(before), agentId, agentName);
  }

  /**
   * A turn of the route's thread ended (or its outputs reached the plugin): answers the route's
   * prompt once its own turn ended and that turn's outputs reached the plugin.
   */
  void turnEnded(Route r) {
    Route.Waiting w = r.current;
    if (w == null || r.turnsToWait < 0) {
      return;
    }
    List<Route.TurnEnd> ours = r.turnEnds.stream().filter(t -> t.seq() > r.promptSeq).toList();
    if (ours.size() < r.turnsToWait) {
      return;
    }
    Generation g = plugin.current();
    Future<Void> flushed = g == null ? Future.succeededFuture() : g.flushed(r.chatId);
    if (!flushed.isComplete()) {
      flushed.onComplete(x -> turnEnded(r)); // the turn's output held behind the session info goes first
      return;
    }
    String stopReason = ours.get(r.turnsToWait - 1).stopReason();
    stopReason = "error".equals(stopReason) ? "end_turn" : stopReason;
    r.current = null;
    outbox.expectAutoRejects(r);
    w.done().tryComplete(new JsonObject().put("stopReason", stopReason));
    pump(r);
  }

  /**
   * The chat left its thread ({@code /new}) while a prompt of it was running: that prompt is answered
   * now ({@code cancelled} for the chat; the old thread's turn goes on without it), so the chat's
   * next message does not wait on a turn it no longer follows.
   */
  private void leaveTurn(Route r) {
    Route.Waiting w = r.current;
    if (w == null) {
      return;
    }
    r.current = null;
    r.turnEnds.clear();
    r.turnsToWait = -1;
    outbox.expectAutoRejects(r);
    w.done().tryComplete(new JsonObject().put("stopReason", "cancelled"));
    pump(r);
  }
}
