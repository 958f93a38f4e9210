package io.switchboard.permission;

import io.switchboard.bus.Addresses;
import io.switchboard.common.Lru;
import io.switchboard.common.RandomIds;
import io.switchboard.bus.NodeScope;
import io.switchboard.bus.ErrorCode;
import io.switchboard.config.Attention;
import io.switchboard.config.Limits;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The permission room: owns the table of pending permission requests and ends each exactly once.
 *
 * <p>Every handler runs on this verticle's own event loop, so "check the surface, then resolve" is
 * atomic: a request leaves the table in the same step that decides its outcome, and nothing can
 * put it back. An outcome reaches the agent (the reply to {@code sb.permission.register}) and the
 * surfaces (a published fact) only after the ledger row recording it was committed.
 */
public final class PermissionRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(PermissionRoom.class);
  private static final int RECENTLY_ENDED = 10_000;

  /** Reasons a request ends cancelled (docs/architecture.md, "The permission ledger"; words in {@link CancelReason}). */
  public static final String SESSION_CANCELLED = CancelReason.SESSION_CANCELLED.slug();
  public static final String AGENT_EXITED = CancelReason.AGENT_EXITED.slug();
  public static final String SURFACE_GONE = CancelReason.SURFACE_GONE.slug();
  public static final String NO_SURFACE = CancelReason.NO_SURFACE.slug();
  public static final String SHUTDOWN = CancelReason.SHUTDOWN.slug();
  public static final String VOIDED_BY_RESTART = CancelReason.VOIDED_BY_RESTART.slug();
  public static final String TOO_MANY_PENDING = CancelReason.TOO_MANY_PENDING.slug();
  public static final String NO_EDGE = CancelReason.NO_EDGE.slug();
  /**
   * The web chat is the operator's console (it holds the access token): it may answer every pending
   * request, whichever surfaces it was raised for, so a card that a chat cannot answer (a group of a
   * dialect that does not say who taps, a plugin that only fetches taps after a turn) is never stuck.
   * Chats are still held to their own threads' requests.
   */
  public static final String OPERATOR_SURFACE = "web";

  public static final String NOT_RECORDED = CancelReason.NOT_RECORDED.slug();
  public static final String WITHDRAWN = CancelReason.WITHDRAWN.slug();

  /**
   * Pending requests the room holds at most ({@code Limits#pendingRequests}: one per 20 KiB of heap,
   * 3,276 with -Xmx64m). One more is recorded in the ledger and cancelled at once, never shown: an
   * agent that asks thousands of questions at a time cannot take the gateway down with it.
   */
  private final int maxPending;
  /**
   * What the pending requests' tool calls and options may take in all, in encoded bytes
   * ({@code Limits#pendingBytes}). The count above assumes small requests; a request holds its whole
   * tool call (a diff, a file's content), so a few large ones are bounded by size instead.
   */
  private final long maxPendingBytes;
  private long pendingBytes;

  private final Map<String, Pending> pending = new LinkedHashMap<>();
  /** How a request ended, and the key of the answer that won it (null: no key, or not an answer). */
  private record Ended(JsonObject outcome, String answerKey) {}

  private final Map<String, Ended> recentlyEnded = Lru.map(RECENTLY_ENDED, false);
  /**
   * Agent process generations whose exit was heard. A registration from one of them (it asked and
   * exited at once, and the exit fact overtook the register) ends {@code agent-exited}: whatever
   * order the two arrive in, nobody waits on a dead process.
   */
  private final Set<String> exitedGenerations = Lru.set(RECENTLY_ENDED);
  /** Ledger rows of new requests still being written; stop waits for them. */
  private final Set<Future<?>> registering = new HashSet<>();
  /** Ends whose ledger write is still under way; shutdown waits for them. */
  private final Set<Future<JsonObject>> ending = new HashSet<>();
  private final RandomIds ids = new RandomIds();
  /** End facts of the requests voided at start, published once the other rooms are up. */
  private final List<JsonObject> voidedFacts = new ArrayList<>();
  private EventBus bus;
  private boolean closing;

  /** Cluster mode: how long pending requests outlive the last edge node; 0 when not clustered. */
  private long edgeGraceMs;
  /** The edge nodes that are members now (cluster mode), as node/incarnation. */
  private final Set<String> edges = new HashSet<>();
  private long edgeGraceTimer = -1;
  /** No edge node has been a member for the grace period: nobody can answer, so new requests end at once. */
  private boolean edgeless;

  public PermissionRoom() {
    this(Limits.ofThisJvm());
  }

  public PermissionRoom(Limits limits) {
    this(limits.pendingRequests(), limits.pendingBytes());
  }

  public PermissionRoom(int maxPending) {
    this(maxPending, Limits.ofThisJvm().pendingBytes());
  }

  public PermissionRoom(int maxPending, long maxPendingBytes) {
    this.maxPendingBytes = maxPendingBytes;
    this.maxPending = maxPending;
  }

  /** How waiting requests draw attention (reminders, escalations, deadlines); the defaults when not set. */
  private Attention attention = Attention.DEFAULT;
  /** Null until start: the wall clock then, unless a test gave its own. */
  private AttentionClock clock;
  private java.time.ZoneId zone = java.time.ZoneId.systemDefault();
  /** The one timer, for the earliest step of any plan; -1 when none is set. */
  private long stepTimer = -1;
  private long stepTimerAt = Long.MAX_VALUE;

  /** The rules in force and what they decide; this loop's alone. */
  private RuleDecisions rules;
  private List<io.switchboard.rules.Rule> configRules = List.of();

  /** The config's rules (presets expanded): written as versions at start beside the grants already kept. */
  public PermissionRoom rules(List<io.switchboard.rules.Rule> rules) {
    this.configRules = List.copyOf(rules);
    return this;
  }

  public PermissionRoom attention(Attention attention) {
    this.attention = attention;
    return this;
  }

  /** The clock plans run on (tests move one by hand). */
  public PermissionRoom clock(AttentionClock clock) {
    this.clock = clock;
    return this;
  }

  /**
   * Cluster mode: the surfaces that answer this node's requests run on edge nodes. While none is a
   * member (all died, or a partition) requests keep waiting for {@code ms}, as a restarted or
   * healed edge can still answer them; then every pending request ends {@code no-edge}, and new
   * ones end at once until an edge node joins: never waiting on surfaces that are not there.
   */
  public PermissionRoom edgeGrace(long ms) {
    this.edgeGraceMs = ms;
    return this;
  }

  /** One pending request: what was asked, who may still answer, and the agent's waiting reply. */
  private static final class Pending {
    final String id;
    final Registration reg;
    final Set<String> eligible;
    final long createdAt;
    /** What its tool call and options take, encoded: counted against the room's byte budget. */
    final long bytes;
    final Promise<JsonObject> outcome = Promise.promise();
    boolean shown;
    /** What its plan says, and its steps still to do, earliest first. */
    final Attention.Resolved plan;
    final java.util.ArrayDeque<Attention.Step> steps = new java.util.ArrayDeque<>();
    /** A question's accepted content, secrets included: for the agent's reply only, never kept. */
    JsonObject agentContent;

    Pending(String id, Registration reg, long createdAt, Attention.Resolved plan) {
      this.id = id;
      this.reg = reg;
      this.eligible = new LinkedHashSet<>(reg.eligible());
      this.createdAt = createdAt;
      this.bytes = reg.bytes();
      this.plan = plan;
      plan.steps(createdAt, plan.pushesAt(createdAt)).stream()
          .sorted(java.util.Comparator.comparingLong(Attention.Step::at)).forEach(steps::add);
    }

    Card.Deadline deadline() {
      Long at = plan.deadlineAt(createdAt);
      return at == null ? null : new Card.Deadline(at, plan.onExpiry().key, plan.deadlineRule());
    }
  }

  /** Where this room serves its commands (a cluster node's own addresses; see NodeScope). */
  private NodeScope scope = NodeScope.SINGLE;

  @Override
  public Future<?> start() {
    scope = NodeScope.of(config());
    bus = vertx.eventBus();
    if (clock == null) {
      clock = AttentionClock.of(vertx);
    }
    rules = new RuleDecisions(bus, clock, configRules);
    return voidLeftovers().compose(v -> rules.sync()).onSuccess(v -> {
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_REGISTER, this::register);
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_RULES_REVOKE, rules::revoke);
      // A thread's grants end with it: listed as ended, not as rules still in force for nothing.
      bus.<JsonObject>consumer(Addresses.THREAD_CHANGED, m -> {
        if (m.body() != null && Boolean.TRUE.equals(m.body().getValue("deleted"))) {
          rules.threadGone(stringField(m.body(), "threadId"));
        }
      });
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_ANSWER, this::answer);
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_PENDING, this::listPending);
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_SHUTDOWN, this::shutdown);
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_STATUS, this::status);
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_ANNOUNCE_VOIDED, m -> {
        List<JsonObject> facts = new ArrayList<>(voidedFacts);
        voidedFacts.clear();
        facts.forEach(f -> publish(Addresses.PERMISSION_CANCELLED, f));
        m.reply(new JsonObject().put("announced", facts.size()));
      });
      bus.<JsonObject>consumer(Addresses.SURFACE_CLOSED, m -> surfaceClosed(m.body()));
      if (edgeGraceMs > 0) {
        bus.<JsonObject>localConsumer(Addresses.CLUSTER_MEMBER, m -> edgeMember(m.body()));
        bus.<JsonObject>request(Addresses.CLUSTER_MEMBERS, new JsonObject(),
        new io.vertx.core.eventbus.DeliveryOptions().setLocalOnly(true)).onComplete(members -> {
          if (members.succeeded()) {
            members.result().body().getJsonArray("members").forEach(o -> edgeMember(((JsonObject) o).copy()
                .put("event", "joined")));
          }
          edgesChanged();
        });
      }
      scope.<JsonObject>serve(bus, Addresses.SESSION_CANCELLED, m -> sessionCancelled(m.body()));
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_WITHDRAW, m -> withdrawn(m.body()));
      scope.<JsonObject>serve(bus, Addresses.PERMISSION_COMPLETE, m -> completed(m.body()));
      scope.<JsonObject>serve(bus, Addresses.AGENT_EXITED, m -> agentExited(m.body()));
    });
  }

  /** Once no request is being registered (its paths read, its row written), however many came meanwhile. */
  private Future<Void> registered() {
    return registering.isEmpty() ? Future.succeededFuture()
        : Future.join(new ArrayList<>(registering)).transform(x -> registered());
  }

  @Override
  public Future<?> stop() {
    // A request that came in after the shutdown (an agent still talking while the rooms stop) ends
    // "shutdown" as soon as its row is written: wait for those rows and their ends, then the store may close.
    return registered().transform(x -> Future.join(new ArrayList<>(ending)))
        .transform(x -> {
          if (!pending.isEmpty()) {
            // Only a graceful shutdown (sb.permission.shutdown) ends them here; otherwise the next start voids them.
            log.warn("{} permission requests left pending without a shutdown; the next start voids them",
                pending.size());
          }
          return Future.succeededFuture();
        });
  }

  /** Rows still pending in the ledger belong to a process that is gone: nobody can answer them now. */
  private Future<Void> voidLeftovers() {
    JsonObject body = new JsonObject().put("reason", VOIDED_BY_RESTART).put("at", System.currentTimeMillis());
    return bus.<JsonObject>request(Addresses.STORE_LEDGER_VOID_PENDING, body).map(reply -> {
      JsonArray voided = reply.body().getJsonArray("voided");
      for (Object o : voided) {
        JsonObject row = (JsonObject) o;
        log.info("permission request {} of thread {} voided by restart", row.getString("requestId"),
            row.getString("threadId"));
        voidedFacts.add(endedFact(row.getString("requestId"), row.getString("threadId"),
            row.getString("sessionId"), row.getJsonObject("toolCall").getString("toolCallId"),
            row.getJsonObject("outcome"), row.getLong("endedAt"), row.getJsonArray("eligible")));
        recentlyEnded.put(row.getString("requestId"), new Ended(row.getJsonObject("outcome"), null));
      }
      return null;
    });
  }

  // ---- commands ----

  private void register(Message<JsonObject> message) {
    Registration reg;
    try {
      reg = Registration.parse(message.body());
    } catch (RuntimeException e) {
      // Whatever is wrong with it, the registrant hears back now: nobody may wait on a request never made.
      ErrorCode.BAD_REQUEST.fail(message, "bad permission request: " + e.getMessage());
      return;
    }
    if (reg.question() == null && rules.readsDisk(reg)) {
      // Paths are resolved and folders listed on a worker: a path on a hung mount holds no other request.
      // Until then the request is not known here; stop() waits for it as for a row being written.
      Promise<Void> read = Promise.promise();
      registering.add(read.future());
      vertx.executeBlocking(() -> factsReader.apply(reg), false).onComplete(facts -> {
        if (facts.failed()) {
          // As when the book throws: a person is asked (the property tests find no input that does this).
          log.warn("permission request of thread {}: its facts could not be read ({}); a person is asked",
              reg.threadId(), facts.cause().toString());
        }
        registered(message, reg, facts.succeeded() ? facts.result() : UNREADABLE);
        registering.remove(read.future());
        read.complete();
      });
      return;
    }
    registered(message, reg, null);
  }

  /** How a request's facts are read from the disk (tests put a slow disk here). */
  private java.util.function.Function<Registration, io.switchboard.rules.ToolFacts> factsReader = RuleDecisions::facts;

  /** How people are judged beyond their roles (the four-eyes rule per agent). */
  private io.switchboard.config.Settings.People people = io.switchboard.config.Settings.People.DEFAULT;

  public PermissionRoom people(io.switchboard.config.Settings.People people) {
    this.people = people;
    return this;
  }

  /** Tests: a reader of facts of their own (a path on a hung mount). */
  PermissionRoom factsReader(java.util.function.Function<Registration, io.switchboard.rules.ToolFacts> reader) {
    this.factsReader = reader;
    return this;
  }

  /** Facts that could not be read: no rule decides (a person is asked). */
  private static final io.switchboard.rules.ToolFacts UNREADABLE = new io.switchboard.rules.ToolFacts(null, null, null,
      null, null, null, null, java.util.List.of(), null, java.util.List.of("its facts could not be read"));

  /** A request whose facts are read ({@code facts}; null: read now, no disk needed) is kept, decided, written. */
  private void registered(Message<JsonObject> message, Registration reg, io.switchboard.rules.ToolFacts facts) {
    // Only the reply address is kept while the request waits, not the message: Vert.x keeps the
    // sender's body beside this room's copy in it (kilobytes of tree a request; docs/performance.md).
    // A send to it reaches the asker's reply handler; on one Vert.x (the agent room that asks runs
    // beside this room: a clustered setup keeps them on one node), as message.reply would.
    String replyTo = message.replyAddress();
    long now = clock.now();
    Pending p = new Pending(newId(), reg, now, attention.resolve(reg.agentId(), reg.projectId()));
    boolean overLimit = pending.size() >= maxPending || pendingBytes + p.bytes > maxPendingBytes;
    pendingBytes += p.bytes;
    pending.put(p.id, p);
    p.outcome.future().onComplete(done -> {
      if (replyTo != null) {
        bus.send(replyTo, new JsonObject().put("requestId", p.id).put("outcome", done.result()));
      }
    });
    log.info("permission request {} registered: thread {}, tool call {}, surfaces {}", p.id, reg.threadId(),
        reg.toolCallId(), p.eligible);

    // A request that will end at once anyway (over the limit, its agent gone, nowhere to show it) is not
    // decided by a rule: the chats are not told a rule answered what was in fact cancelled.
    boolean endsAnyway = overLimit || closing || edgeless || p.eligible.isEmpty()
        || reg.generation() != null && exitedGenerations.contains(reg.generation());
    // A question is never answered by a rule: only a person knows what to fill in.
    io.switchboard.rules.RuleBook.Decision decision = endsAnyway || reg.question() != null || facts == UNREADABLE
        ? null : rules.decide(p.id, reg, facts, now);
    JsonObject ruled = decision == null ? null : RuleDecisions.outcome(reg, decision);
    JsonObject row = card(p).put("pushNow", ruled == null && p.plan.pushesAt(now)).put("attention", planJson(p));
    if (ruled != null) {
      // Answered by a rule: no card anywhere; each chat gets one line saying which rule, instead.
      row.put("auto", RuleDecisions.line(reg, decision));
    }
    Future<Message<JsonObject>> append = bus.request(Addresses.STORE_LEDGER_APPEND, row);
    registering.add(append);
    append.onComplete(appended -> {
      registering.remove(append);
      if (!pending.containsKey(p.id)) {
        return; // ended while the row was being written: its end state is published instead
      }
      if (appended.failed()) {
        // Ledger first: a request with no row is never shown, and its agent hears "cancelled".
        log.error("permission request {} could not be written to the ledger; cancelled without a card", p.id,
            appended.cause());
        pending.remove(p.id);
        pendingBytes -= p.bytes;
        JsonObject outcome = cancelled(NOT_RECORDED);
        recentlyEnded.put(p.id, new Ended(outcome, null));
        p.outcome.complete(outcome);
        return;
      }
      if (closing) {
        end(p, cancelled(SHUTDOWN));
      } else if (overLimit) {
        log.warn("permission request {} of thread {} refused: {} requests are pending, the most this gateway holds "
            + "or their tool calls take {} of the {} bytes allowed (see docs/operations.md)", p.id, reg.threadId(),
            maxPending, pendingBytes, maxPendingBytes);
        end(p, cancelled(TOO_MANY_PENDING));
      } else if (reg.generation() != null && exitedGenerations.contains(reg.generation())) {
        end(p, cancelled(AGENT_EXITED));
      } else if (p.eligible.isEmpty()) {
        end(p, cancelled(NO_SURFACE));
      } else if (edgeless) {
        end(p, cancelled(NO_EDGE));
      } else if (ruled != null) {
        end(p, ruled);
      } else {
        p.shown = true;
        publish(Addresses.PERMISSION_SHOWN, card(p));
        int pushed = appended.result().body().getInteger("pushed", 0);
        if (pushed > 0) {
          attended(p, "push", p.createdAt, pushed); // the first push went with the card
        }
        scheduleSteps();
      }
    });
  }

  private void answer(Message<JsonObject> message) {
    Answer a;
    try {
      a = Answer.parse(message.body());
    } catch (IllegalArgumentException e) {
      ErrorCode.BAD_REQUEST.fail(message, e.getMessage());
      return;
    }
    String id = a.requestId();
    Pending p = pending.get(id);
    if (p == null) {
      answerEnded(message, id, a.answerKey());
      return;
    }
    if (a.chat() != null && a.by() == null && a.chat().requireLinked()
        && !(a.chat().anonymous() && a.chat().cardsInGroups())) {
      // Fail closed where the plugin asks for it: a chat account no person has linked cannot answer,
      // whatever the plugin's lists say (an anonymous group tap names nobody to link: its plugin's
      // cardsInGroups alone decides it, below).
      String who = a.user() != null ? a.user() : ChatApproval.GROUP_MEMBER;
      note(p.id, "rejected", a.surface(), who, "not_linked: no person has linked this chat account");
      log.warn("permission request {} of thread {}: {} tapped it in {} but is linked to no person", id,
          p.reg.threadId(), who, a.surface());
      ErrorCode.NOT_APPROVER.fail(message, "This chat account is not linked to a person of this gateway: send /link "
          + "here and enter the code on the page (or answer in the web chat).");
      return;
    }
    if (a.by() != null) {
      String refusal = refusal(p, a);
      if (refusal != null) {
        note(p.id, "rejected", a.surface(), a.by().personId(), "not_permitted: " + refusal);
        log.warn("permission request {} of thread {}: {} ({}) may not answer it: {}", id, p.reg.threadId(),
            a.by().name(), a.by().personId(), refusal);
        ErrorCode.NOT_APPROVER.fail(message, a.by().name() + " may not answer this: " + refusal + ".");
        return;
      }
    }
    if (a.chat() != null && a.by() == null) {
      // An account no person has linked, where the plugin lets such answer (requireLinked false, as before
      // there were people): judged by its lists; a linked account's person was judged above by their roles.
      ChatApproval.Verdict verdict = a.chat().judge(a.user(), p.reg.startedBy());
      if (!verdict.allowed()) {
        note(p.id, "rejected", a.surface(), verdict.who(), "not_eligible: not an approver");
        log.warn("permission request {} of thread {}: {} tapped it in {} but is not an approver", id,
            p.reg.threadId(), verdict.who(), a.surface());
        ErrorCode.NOT_APPROVER.fail(message, verdict.refusal());
        return;
      }
      a = a.asUser(verdict.who());
    }
    String surface = a.surface();
    String optionId = a.optionId();
    String user = a.user();
    if (!surface.equals(OPERATOR_SURFACE) && !p.eligible.contains(surface)) {
      note(p.id, "rejected", surface, user, "not_eligible");
      log.warn("permission request {} of thread {}: answer from surface {} refused, not eligible", id,
          p.reg.threadId(), surface);
      ErrorCode.NOT_ELIGIBLE.fail(message, "surface " + surface + " may not answer request " + id);
      return;
    }
    JsonObject question = p.reg.question();
    if (question != null) {
      answerQuestion(message, p, a, question);
      return;
    }
    JsonObject option = p.reg.option(optionId);
    if (option == null) {
      note(p.id, "rejected", surface, user, "invalid_option:" + optionId);
      log.warn("permission request {} of thread {}: answer {} from surface {} refused, not an offered option", id,
          p.reg.threadId(), optionId, surface);
      ErrorCode.INVALID_OPTION.fail(message, "request " + id + " offers no option \"" + optionId + "\"");
      return;
    }
    JsonObject answeredBy = answeredBy(a);
    Answer.Grant grant = a.grant() != null ? a.grant()
        : a.chat() != null && "allow_always".equals(option.getString("kind")) ? Answer.Grant.CHAT_DEFAULT : null;
    JsonObject granted = null;
    if (grant != null) {
      if (!"allow_always".equals(option.getString("kind"))) {
        ErrorCode.INVALID_OPTION.fail(message, "a grant is made by an \"always\" option; " + optionId + " is not one");
        return;
      }
      io.switchboard.rules.Rule rule;
      try {
        rule = Grants.rule(grant, p.reg, ids.next("g_", 6), user == null ? surface : user + " on " + surface,
            clock.now());
      } catch (IllegalArgumentException e) {
        ErrorCode.BAD_REQUEST.fail(message, e.getMessage());
        return;
      }
      // The agent is answered once: the gateway keeps the "always", and can take it back.
      JsonObject once = p.reg.optionOfKind("allow_once");
      if (once != null) {
        option = once;
        optionId = once.getString("optionId");
      }
      rules.grant(rule);
      granted = rule.toJson();
    }
    JsonObject outcome = new JsonObject().put("outcome", "selected").put("optionId", optionId)
        .put("kind", option.getString("kind")).put("answeredBy", answeredBy);
    if (granted != null) {
      outcome.put("grant", new JsonObject().put("ruleId", granted.getString("ruleId")));
    }
    end(p, outcome, a.answerKey()).onComplete(done -> message.reply(new JsonObject().put("requestId", id)
        .put("outcome", outcome)));
  }

  /**
   * A question's answer: one of the options it offers, and for {@code accept} a form's content that
   * its schema allows (checked here, whatever the page checked). The ledger and the surfaces keep the
   * answer without the fields the schema marks secret; only the agent gets those.
   */
  /**
   * Why the named person of an answer may not give it, or null: their permissions must cover the
   * call's kind (a question: {@code answer}; a call without a kind: {@code approve:*}), an "always"
   * needs {@code rules}, and under the agent's four-eyes rule the person who prompted the turn may
   * not approve its calls of the named kinds (a call without a kind counts as any of them).
   */
  private String refusal(Pending p, Answer a) {
    io.switchboard.people.Principal by = a.by();
    JsonObject toolCall = p.reg.toolCall();
    String kind = toolCall.getValue("kind") instanceof String k ? k : null;
    boolean question = p.reg.question() != null;
    String needed = question ? io.switchboard.people.Roles.ANSWER : io.switchboard.people.Roles.toApprove(kind);
    if (!by.may(needed)) {
      return "it needs the permission " + needed;
    }
    if (a.grant() != null && !by.may(io.switchboard.people.Roles.RULES)) {
      return "an \"always\" makes a rule, which needs the permission rules";
    }
    java.util.Set<String> fourEyes = people.fourEyesKinds(p.reg.agentId());
    JsonObject option = p.reg.option(a.optionId());
    boolean approving = option != null && option.getString("kind", "").startsWith("allow");
    if (!question && approving && !fourEyes.isEmpty() && by.personId().equals(p.reg.promptedBy())
        && (kind == null || fourEyes.contains(kind))) {
      return "the person who prompted this turn may not approve its " + (kind == null ? "calls" : kind + " calls")
          + " (four-eyes rule of agent " + p.reg.agentId() + ")";
    }
    return null;
  }

  /** Who answered, as the ledger keeps it: the surface, the user it named, and the person with their login. */
  private static JsonObject answeredBy(Answer a) {
    JsonObject answeredBy = new JsonObject().put("surface", a.surface());
    if (a.user() != null) {
      answeredBy.put("user", a.user());
    }
    if (a.by() != null) {
      answeredBy.put("person", a.by().who());
    }
    return answeredBy;
  }

  private void answerQuestion(Message<JsonObject> message, Pending p, Answer a, JsonObject question) {
    String optionId = a.optionId();
    JsonObject option = p.reg.option(optionId);
    if (option == null || a.grant() != null) {
      note(p.id, "rejected", a.surface(), a.user(), "invalid_option:" + optionId);
      ErrorCode.INVALID_OPTION.fail(message, a.grant() != null ? "a question's answer makes no grant"
          : "question " + p.id + " offers no option \"" + optionId + "\"");
      return;
    }
    JsonObject content;
    try {
      content = Question.content(question, optionId, a.content());
    } catch (IllegalArgumentException e) {
      String why = e.getMessage().length() > 300 ? e.getMessage().substring(0, 300) + "\u2026" : e.getMessage();
      note(p.id, "rejected", a.surface(), a.user(), "invalid_content: " + why);
      log.warn("question {} of thread {}: an answer from surface {} refused: {}", p.id, p.reg.threadId(),
          a.surface(), why);
      ErrorCode.BAD_REQUEST.fail(message, why);
      return;
    }
    JsonObject answeredBy = answeredBy(a);
    JsonObject outcome = new JsonObject().put("outcome", "selected").put("optionId", optionId)
        .put("kind", option.getString("kind")).put("answeredBy", answeredBy);
    JsonObject kept = Question.kept(question, content);
    if (kept != null) {
      outcome.put("answer", kept);
    }
    p.agentContent = content;
    end(p, outcome, a.answerKey()).onComplete(done -> message.reply(new JsonObject().put("requestId", p.id)
        .put("outcome", outcome)));
  }

  /**
   * The request is not pending: it ended (perhaps before a restart), or it never existed. An answer
   * with the key of the one that won it is that answer sent again (its reply was lost on the way):
   * it learns that it won, and nothing changes.
   */
  private void answerEnded(Message<JsonObject> message, String id, String answerKey) {
    Ended ended = recentlyEnded.get(id);
    if (ended != null) {
      replyEnded(message, id, ended.outcome(), answerKey != null && answerKey.equals(ended.answerKey()));
      return;
    }
    bus.<JsonObject>request(Addresses.STORE_LEDGER_GET, new JsonObject().put("requestId", id))
        .onSuccess(reply -> {
          JsonObject row = reply.body().getJsonObject("request");
          if (row == null) {
            ErrorCode.UNKNOWN_REQUEST.fail(message, "no permission request " + id);
          } else {
            replyEnded(message, id, row.getJsonObject("outcome", new JsonObject()),
                answerKey != null && answerKey.equals(row.getString("answerKey")));
          }
        })
        .onFailure(err -> ErrorCode.UNKNOWN_REQUEST.fail(message, "no pending permission request " + id));
  }

  private static void replyEnded(Message<JsonObject> message, String id, JsonObject outcome, boolean sameAnswer) {
    if (sameAnswer) {
      message.reply(new JsonObject().put("requestId", id).put("outcome", outcome).put("repeated", true));
    } else {
      ErrorCode.ALREADY_ANSWERED.fail(message, alreadyAnswered(id, outcome));
    }
  }

  private static String alreadyAnswered(String id, JsonObject outcome) {
    if ("selected".equals(outcome.getString("outcome"))) {
      return "request " + id + " was already answered: " + outcome.getString("optionId") + " from "
          + outcome.getJsonObject("answeredBy", new JsonObject()).getString("surface");
    }
    if ("expired".equals(outcome.getString("outcome"))) {
      return "request " + id + " already expired (" + outcome.getString("rule") + ")";
    }
    return "request " + id + " already ended: cancelled (" + outcome.getString("reason") + ")";
  }

  private void listPending(Message<JsonObject> message) {
    String threadId = message.body() == null ? null : message.body().getString("threadId");
    JsonArray cards = new JsonArray();
    for (Pending p : pending.values()) {
      if (p.shown && (threadId == null || threadId.equals(p.reg.threadId()))) {
        cards.add(scope.stamp(card(p)));
      }
    }
    JsonObject reply = new JsonObject().put("requests", cards);
    if (scope.node() != null) {
      scope.stamp(reply).put("seq", factSeq); // an edge that reconciled with this list has heard up to here
    }
    message.reply(reply);
  }

  private void status(Message<JsonObject> message) {
    Long oldest = pending.values().stream().map(p -> p.createdAt).min(Long::compare).orElse(null);
    JsonObject reply = new JsonObject().put("pending", pending.size()).put("ending", ending.size())
        .put("oldestCreatedAt", oldest)
        .put("closing", closing);
    if (scope.node() != null) {
      scope.stamp(reply).put("seq", factSeq); // an edge that heard less missed the last facts
    }
    message.reply(reply);
  }

  /** Cancels the whole table (reason shutdown) and replies once every end is in the ledger. */
  private void shutdown(Message<JsonObject> message) {
    closing = true;
    List<Pending> all = new ArrayList<>(pending.values());
    for (Pending p : all) {
      end(p, cancelled(SHUTDOWN));
    }
    log.info("shutdown: {} pending permission requests cancelled", all.size());
    Future.join(new ArrayList<>(ending)).onComplete(done ->
        message.reply(new JsonObject().put("cancelled", all.size())));
  }

  // ---- facts ----

  /**
   * {@code {surface}} closes one surface; {@code {plugin}} closes every chat of that plugin; with a
   * {@code threadId}, only for that thread's requests (a chat that moved on with {@code /new}).
   */
  private void surfaceClosed(JsonObject fact) {
    String surface = fact == null ? null : stringField(fact, "surface");
    String onlyThread = fact == null ? null : stringField(fact, "threadId");
    String plugin = fact == null ? null : stringField(fact, "plugin");
    if (surface == null && plugin == null) {
      log.warn("ignored a surface-closed fact without a surface or plugin: {}", fact);
      return;
    }
    Predicate<String> closes = surface != null ? surface::equals : s -> s.startsWith(plugin + ":");
    for (Pending p : new ArrayList<>(pending.values())) {
      if (onlyThread != null && !onlyThread.equals(p.reg.threadId())) {
        continue;
      }
      for (String s : new ArrayList<>(p.eligible)) {
        if (closes.test(s)) {
          p.eligible.remove(s);
          note(p.id, "surface_removed", s, null, null);
          log.info("permission request {} of thread {}: surface {} closed, {} left", p.id, p.reg.threadId(), s,
              p.eligible);
        }
      }
      if (p.eligible.isEmpty()) {
        end(p, cancelled(SURFACE_GONE));
      }
    }
  }

  /**
   * Cluster mode: the facts carry this node's name, incarnation and a sequence number of its own,
   * one more at each fact: an edge that sees a gap (a connection lost and made again) knows it
   * missed some and asks this node what is pending (docs/event-bus.md, "Cluster").
   */
  private long factSeq;

  private void publish(String address, JsonObject fact) {
    if (scope.node() != null) {
      scope.stamp(fact).put("seq", ++factSeq);
    }
    bus.publish(address, fact);
  }

  private void edgeMember(JsonObject fact) {
    if (!"edge".equals(fact.getString("role"))) {
      return;
    }
    String edge = fact.getString("node") + "/" + fact.getString("incarnation");
    if ("left".equals(fact.getString("event"))) {
      edges.remove(edge);
    } else {
      edges.add(edge);
    }
    edgesChanged();
  }

  private void edgesChanged() {
    if (!edges.isEmpty()) {
      if (edgeGraceTimer >= 0 || edgeless) {
        log.info("an edge node is a member again ({}): permission requests wait for its surfaces", edges);
      }
      if (edgeGraceTimer >= 0) {
        vertx.cancelTimer(edgeGraceTimer);
        edgeGraceTimer = -1;
      }
      edgeless = false;
    } else if (edgeGraceTimer < 0 && !edgeless) {
      log.warn("no edge node is a member: the {} pending permission requests end in {} s unless one joins",
          pending.size(), edgeGraceMs / 1000);
      edgeGraceTimer = vertx.setTimer(edgeGraceMs, t -> {
        edgeGraceTimer = -1;
        edgeless = true;
        log.warn("no edge node joined within {} s: {} pending permission requests end {}", edgeGraceMs / 1000,
            pending.size(), NO_EDGE);
        endAll(p -> true, NO_EDGE);
      });
    }
  }

  private void sessionCancelled(JsonObject fact) {
    String threadId = fact == null ? null : stringField(fact, "threadId");
    String sessionId = fact == null ? null : stringField(fact, "sessionId");
    if (threadId == null || sessionId == null) {
      log.warn("ignored a session-cancelled fact without threadId and sessionId: {}", fact);
      return;
    }
    endAll(p -> p.reg.threadId().equals(threadId) && p.reg.sessionId().equals(sessionId), SESSION_CANCELLED);
  }

  /** The agent withdrew a question: that process's request for that tool call ends, once. */
  private void withdrawn(JsonObject fact) {
    String threadId = fact == null ? null : stringField(fact, "threadId");
    String toolCallId = fact == null ? null : stringField(fact, "toolCallId");
    String generation = fact == null ? null : stringField(fact, "generation");
    if (threadId == null || toolCallId == null) {
      log.warn("ignored a withdrawal without threadId and toolCallId: {}", fact);
      return;
    }
    endAll(p -> p.reg.threadId().equals(threadId) && p.reg.toolCallId().equals(toolCallId)
        && (generation == null || generation.equals(p.reg.generation())), WITHDRAWN);
  }

  /** The agent says a URL question's interaction is done: that process's question still waiting ends. */
  private void completed(JsonObject fact) {
    String elicitationId = fact == null ? null : stringField(fact, "elicitationId");
    String generation = fact == null ? null : stringField(fact, "generation");
    if (generation == null || elicitationId == null) {
      log.warn("ignored a completion without generation and elicitationId: {}", fact);
      return;
    }
    endAll(p -> {
      JsonObject q = generation.equals(p.reg.generation()) ? p.reg.question() : null;
      return q != null && elicitationId.equals(q.getString("elicitationId"));
    }, CancelReason.COMPLETED.slug());
  }

  private void agentExited(JsonObject fact) {
    String threadId = fact == null ? null : stringField(fact, "threadId");
    if (threadId == null) {
      log.warn("ignored an agent-exited fact without threadId: {}", fact);
      return;
    }
    String generation = stringField(fact, "generation");
    if (generation != null) {
      // Exactly the requests of the process that exited; one registered later ends when its row is written.
      exitedGenerations.add(generation);
      endAll(p -> generation.equals(p.reg.generation()), AGENT_EXITED);
      return;
    }
    String sessionId = stringField(fact, "sessionId");
    endAll(p -> p.reg.threadId().equals(threadId) && (sessionId == null || p.reg.sessionId().equals(sessionId)),
        AGENT_EXITED);
  }

  private void endAll(Predicate<Pending> which, String reason) {
    for (Pending p : new ArrayList<>(pending.values())) {
      if (which.test(p)) {
        end(p, cancelled(reason));
      }
    }
  }

  // ---- the one transition out of PENDING ----

  /**
   * Ends a pending request: it leaves the table now (so any later answer is "already answered"),
   * then the ledger records the outcome, then the agent and the surfaces learn it.
   */
  private Future<JsonObject> end(Pending p, JsonObject outcome) {
    return end(p, outcome, null);
  }

  /** {@code answerKey}: the key of the answer that ended it, if it had one. */
  private Future<JsonObject> end(Pending p, JsonObject outcome, String answerKey) {
    if (pending.remove(p.id) == null) {
      throw new IllegalStateException("request " + p.id + " ended twice");
    }
    pendingBytes -= p.bytes;
    recentlyEnded.put(p.id, new Ended(outcome, answerKey));
    long endedAt = clock.now();
    boolean selected = "selected".equals(outcome.getString("outcome"));
    boolean expired = "expired".equals(outcome.getString("outcome"));
    JsonObject answeredBy = outcome.getJsonObject("answeredBy", new JsonObject());
    JsonObject ledger = new JsonObject().put("requestId", p.id)
        .put("state", selected ? "selected" : expired ? "expired" : "cancelled")
        .put("optionId", outcome.getString("optionId"))
        .put("optionKind", outcome.getString("kind"))
        .put("reason", expired ? outcome.getString("rule") : outcome.getValue("rule") instanceof JsonObject r
            ? "matched " + r.getString("matched") : outcome.getValue("grant") instanceof JsonObject g
            ? "granted " + g.getString("ruleId") : outcome.getString("reason"))
        .put("surface", answeredBy.getString("surface"))
        .put("user", answeredBy.getString("user"))
        .put("person", answeredBy.getJsonObject("person"))
        .put("outcome", outcome)
        .put("answer", outcome.getJsonObject("answer"))
        .put("answerKey", answerKey)
        .put("endedAt", endedAt);
    JsonObject fact = endedFact(p.id, p.reg.threadId(), p.reg.sessionId(), p.reg.toolCallId(), outcome, endedAt,
        new JsonArray(p.reg.eligibleList())).put("createdAt", p.createdAt);
    if (outcome.getValue("rule") instanceof JsonObject) {
      fact.put("title", p.reg.toolCall().getString("title")); // no card showed it: the line saying so names it
    }
    Future<JsonObject> done = bus.<JsonObject>request(Addresses.STORE_LEDGER_END, ledger)
        .onFailure(err -> log.error("permission request {}: the ledger could not record its end ({})", p.id,
            err.getMessage()))
        .transform(written -> {
          // The human's answer (or the cancellation) must reach the agent even if the disk failed.
          p.outcome.complete(p.agentContent == null ? outcome : outcome.copy().put("content", p.agentContent));
          publish(selected ? Addresses.PERMISSION_RESOLVED : Addresses.PERMISSION_CANCELLED, fact);
          return Future.succeededFuture(fact);
        });
    if (selected) {
      log.info("permission request {} of thread {} answered {} ({}) from surface {}", p.id, p.reg.threadId(),
          outcome.getString("optionId"), outcome.getString("kind"), answeredBy.getString("surface"));
    } else if (expired) {
      log.info("permission request {} of thread {} expired unanswered ({}): {}", p.id, p.reg.threadId(),
          outcome.getString("rule"), outcome.getString("onExpiry"));
    } else {
      log.info("permission request {} of thread {} cancelled: {} (surfaces {})", p.id, p.reg.threadId(),
          outcome.getString("reason"), p.reg.eligibleList());
    }
    ending.add(done);
    done.onComplete(x -> ending.remove(done));
    return done;
  }

  private void note(String requestId, String event, String surface, String user, String detail) {
    bus.request(Addresses.STORE_LEDGER_NOTE, new JsonObject().put("requestId", requestId)
            .put("event", event).put("surface", surface).put("user", user).put("detail", detail)
            .put("at", System.currentTimeMillis()))
        .onFailure(err -> log.error("permission request {}: could not note {} in the ledger", requestId, event, err));
  }

  private static JsonObject cancelled(String reason) {
    return new JsonObject().put("outcome", "cancelled").put("reason", reason);
  }

  private static JsonObject card(Pending p) {
    return new Card(p.id, p.reg.threadId(), p.reg.sessionId(), p.reg.toolCall(), p.reg.options(),
        new ArrayList<>(p.eligible), p.createdAt, p.reg.agentId(), p.reg.projectId(), p.deadline()).toJson();
  }

  /** The plan as the ledger keeps it beside the row: its deadline, steps and escalation chats. */
  private static JsonObject planJson(Pending p) {
    JsonArray steps = new JsonArray();
    p.steps.forEach(st -> steps.add(new JsonObject().put("step", st.name()).put("at", st.at())));
    Card.Deadline d = p.deadline();
    JsonObject plan = new JsonObject().put("steps", steps).put("escalateTo", new JsonArray(p.plan.escalateTo()));
    return d == null ? plan : plan.put("deadline", new JsonObject().put("at", d.at()).put("onExpiry", d.onExpiry())
        .put("rule", d.rule()));
  }

  // ---- attention: one timer for the earliest step of every plan ----

  /** Sets the one timer for the earliest step still to do (or none). */
  private void scheduleSteps() {
    long earliest = Long.MAX_VALUE;
    for (Pending p : pending.values()) {
      if (p.shown && !p.steps.isEmpty()) {
        earliest = Math.min(earliest, p.steps.peekFirst().at());
      }
    }
    if (earliest == stepTimerAt && stepTimer >= 0) {
      return;
    }
    if (stepTimer >= 0) {
      clock.cancelTimer(stepTimer);
      stepTimer = -1;
    }
    stepTimerAt = earliest;
    if (earliest != Long.MAX_VALUE && !closing) {
      stepTimer = clock.setTimer(earliest - clock.now(), t -> {
        stepTimer = -1;
        stepTimerAt = Long.MAX_VALUE;
        runDueSteps();
      });
    }
  }

  private void runDueSteps() {
    long now = clock.now();
    for (Pending p : new ArrayList<>(pending.values())) {
      while (pending.containsKey(p.id) && p.shown && !p.steps.isEmpty() && p.steps.peekFirst().at() <= now) {
        runStep(p, p.steps.pollFirst(), now);
      }
    }
    scheduleSteps();
  }

  private void runStep(Pending p, Attention.Step step, long now) {
    if (step.name().equals("expire")) {
      end(p, expired(p));
      return;
    }
    JsonObject card = card(p);
    card.remove("eligible");
    String text = Waiting.stepText(step.name(), p.reg.toolCall().getString("title", "a tool call"),
        now - p.createdAt, p.deadline(), now, zone);
    JsonObject body = new JsonObject().put("requestId", p.id).put("step", step.name()).put("at", now)
        .put("card", card).put("text", text).put("escalateTo", new JsonArray(p.plan.escalateTo()));
    bus.<JsonObject>request(Addresses.STORE_LEDGER_ATTEND, body).onComplete(done -> {
      if (done.failed()) {
        log.error("permission request {}: its {} step could not be written ({}); it is not retried", p.id,
            step.name(), done.cause().getMessage());
        return;
      }
      if (!done.result().body().getBoolean("done", false)) {
        return; // ended meanwhile, or done already
      }
      for (Object surface : done.result().body().getJsonArray("added", new JsonArray())) {
        p.eligible.add((String) surface); // the chats escalated to may answer now
      }
      log.info("permission request {} of thread {}: {} after {}", p.id, p.reg.threadId(), step.name(),
          Waiting.duration(now - p.createdAt));
      attended(p, step.name(), now, done.result().body().getInteger("pushed", 0));
    });
  }

  /** A step written to the ledger, as a fact: counted by /metrics; a page highlights a reminded card. */
  private void attended(Pending p, String step, long at, int pushed) {
    publish(Addresses.PERMISSION_ATTENTION, new JsonObject().put("requestId", p.id).put("threadId", p.reg.threadId())
        .put("step", step).put("at", at).put("waitedMs", at - p.createdAt).put("pushed", pushed));
  }

  /** The deadline passed: the agent gets a reject-kind option (never an allow), or its turn stops. */
  private static JsonObject expired(Pending p) {
    Card.Deadline d = p.deadline();
    JsonObject outcome = new JsonObject().put("outcome", "expired").put("rule", d.rule())
        .put("onExpiry", d.onExpiry());
    if (d.onExpiry().equals(Attention.OnExpiry.REJECT.key)) {
      JsonObject reject = p.reg.optionOfKind("reject_once");
      if (reject == null) {
        reject = p.reg.optionOfKind("reject_always");
      }
      if (reject != null) {
        outcome.put("optionId", reject.getString("optionId")).put("kind", reject.getString("kind"));
      }
    }
    return outcome;
  }

  private static JsonObject endedFact(String id, String threadId, String sessionId, String toolCallId,
                                      JsonObject outcome, long endedAt, JsonArray surfaces) {
    return new JsonObject().put("requestId", id).put("threadId", threadId).put("sessionId", sessionId)
        .put("toolCallId", toolCallId).put("outcome", outcome.copy()).put("endedAt", endedAt)
        .put("surfaces", surfaces);
  }

  private String newId() {
    return ids.next("pr_");
  }

  private static String stringField(JsonObject b, String field) {
    return b.getValue(field) instanceof String s && !s.isEmpty() ? s : null;
  }
}
