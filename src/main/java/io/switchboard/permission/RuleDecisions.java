package io.switchboard.permission;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.rules.Rule;
import io.switchboard.rules.RuleBook;
import io.switchboard.rules.ToolFacts;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The permission room's rules (docs/architecture.md, "Rules"): the book in force (the config's rules
 * and presets, and people's grants, newest version of each), what it decides for a request, the
 * outcome and chat line a decision gives, grants made and taken back. Lives on the permission room's
 * event loop: the room asks, this answers; only the room ends requests.
 */
final class RuleDecisions {
  private static final Logger log = LoggerFactory.getLogger(RuleDecisions.class);

  private final RuleBook book = new RuleBook();
  private final EventBus bus;
  private final AttentionClock clock;
  private final List<Rule> configRules;

  RuleDecisions(EventBus bus, AttentionClock clock, List<Rule> configRules) {
    this.bus = bus;
    this.clock = clock;
    this.configRules = configRules;
  }

  /** The config's rules as versions beside the grants kept; the newest of each goes into the book. */
  Future<Void> sync() {
    JsonArray configured = new JsonArray();
    configRules.forEach(r -> configured.add(r.toJson()));
    return bus.<JsonObject>request(Addresses.STORE_RULES_SYNC, new JsonObject().put("rules", configured)).map(reply -> {
      for (Object o : reply.body().getJsonArray("rules")) {
        book.put(Rule.fromJson((JsonObject) o));
      }
      log.info("{} rules in force", book.all().stream().filter(r -> r.active(clock.now())).count());
      return (Void) null;
    }).recover(err -> {
      // Without its rules the room still works, the safe way: every request asks a person.
      log.error("the rules could not be read ({}); every request asks a person until the next start",
          err.getMessage());
      return Future.succeededFuture();
    });
  }

  /** Whether a rule may decide this request and its facts need the disk: they are read on a worker, not the loop. */
  boolean readsDisk(Registration reg) {
    return !book.all().isEmpty() && ToolFacts.namesPaths(reg.toolCall());
  }

  /** A request's facts as the rules read them (paths resolved, folders listed): may touch the disk. */
  static ToolFacts facts(Registration reg) {
    return ToolFacts.of(reg.agentId(), reg.projectId(), reg.threadId(), reg.toolCall(),
        reg.cwd() == null ? null : java.nio.file.Path.of(reg.cwd()));
  }

  /**
   * The rule that decides request {@code id}, or null: a person is asked (also when the rules cannot be
   * tried). {@code facts}: read already (off the loop), else read here (no path in the call: no disk).
   */
  RuleBook.Decision decide(String id, Registration reg, ToolFacts facts, long now) {
    try {
      return book.decide(facts != null ? facts : facts(reg), now);
    } catch (RuntimeException e) {
      log.warn("permission request {}: its rules could not be tried ({}); a person is asked", id, e.toString());
      return null;
    }
  }

  /**
   * The outcome a rule's decision gives, or null: a person is asked. An allow answers with the
   * agent's allow_once option (never an allow_always: the agent would keep a grant the gateway
   * cannot take back), a deny with its reject_once (else reject_always); an "ask" rule, or a rule
   * whose option the agent did not offer, leaves the request to a person. The outcome names the
   * rule as the ledger row will ({@code LedgerRows}), so the agent, the facts and the ledger agree.
   */
  static JsonObject outcome(Registration reg, RuleBook.Decision d) {
    if (d.effect() == Rule.Effect.ASK) {
      return null;
    }
    JsonObject option = d.effect() == Rule.Effect.ALLOW ? reg.optionOfKind("allow_once")
        : reg.optionOfKind("reject_once") != null ? reg.optionOfKind("reject_once")
        : reg.optionOfKind("reject_always");
    if (option == null) {
      return null;
    }
    return new JsonObject().put("outcome", "selected").put("optionId", option.getString("optionId"))
        .put("kind", option.getString("kind"))
        .put("answeredBy", new JsonObject().put("surface", "rule").put("user", d.rule().ref()))
        .put("rule", new JsonObject().put("ruleId", d.rule().id()).put("version", d.rule().version())
            .put("matched", String.join("; ", d.matched())));
  }

  /** The one line a chat gets instead of a card. */
  static String line(Registration reg, RuleBook.Decision d) {
    boolean allowed = d.effect() == Rule.Effect.ALLOW;
    String title = reg.toolCall().getString("title", "a tool call");
    return (allowed ? "\u2705 Allowed" : "\u26d4 Refused") + " by rule " + d.rule().id() + ": \u201c" + title
        + "\u201d." + ("grant".equals(d.rule().source()) ? " To take it back: /revoke " + d.rule().id() : "");
  }

  /** A person's "always" kept as a rule: in force from now on, and written to the store. */
  void grant(Rule rule) {
    book.put(rule);
    write(rule);
  }

  private void write(Rule rule) {
    bus.request(Addresses.STORE_RULES_APPEND, new JsonObject().put("rule", rule.toJson())).onFailure(err -> {
      // Not kept: it must not go on answering as if it were.
      log.error("rule {} could not be written ({}); it is dropped", rule.ref(), err.getMessage());
      if (book.get(rule.id()) != null && book.get(rule.id()).version() == rule.version()) {
        book.put(rule.revoked(clock.now(), "not-recorded"));
      }
    });
  }

  /** A deleted thread's grants end with it: listed as ended, not as rules still in force for nothing. */
  void threadGone(String threadId) {
    if (threadId == null) {
      return;
    }
    for (Rule r : book.all()) {
      if ("grant".equals(r.source()) && r.revokedAt() == null && "thread".equals(r.scope().kind())
          && threadId.equals(r.scope().id())) {
        Rule ended = r.revoked(clock.now(), "thread deleted");
        book.put(ended);
        write(ended);
      }
    }
  }

  /** {@code {ruleId, by}}: a grant taken back, from the next request on; config rules change in the config. */
  void revoke(Message<JsonObject> message) {
    JsonObject b = message.body() == null ? new JsonObject() : message.body();
    String id = b.getValue("ruleId") instanceof String s && !s.isEmpty() ? s : null;
    String by = b.getValue("by") instanceof String s && !s.isEmpty() ? s : null;
    Rule rule = id == null ? null : book.get(id);
    if (rule == null) {
      ErrorCode.UNKNOWN_REQUEST.fail(message, "no rule " + id);
      return;
    }
    if (!"grant".equals(rule.source())) {
      ErrorCode.BAD_REQUEST.fail(message, "rule " + id + " comes from the config (" + rule.source() + "): change it "
          + "there, then restart");
      return;
    }
    if (rule.revokedAt() != null) {
      message.reply(rule.toJson());
      return;
    }
    Rule revoked = rule.revoked(clock.now(), by == null ? "someone" : by);
    book.put(revoked); // the very next request no longer sees it
    bus.request(Addresses.STORE_RULES_APPEND, new JsonObject().put("rule", revoked.toJson()))
        .onSuccess(x -> {
          log.info("rule {} revoked by {}", id, revoked.revokedBy());
          message.reply(revoked.toJson());
        })
        .onFailure(err -> {
          log.error("the revocation of rule {} could not be written ({}); it is revoked until the next start", id,
              err.getMessage());
          ErrorCode.STORE_FAILED.fail(message, "the revocation could not be written: " + err.getMessage()
              + " (it holds until the gateway restarts)");
        });
  }
}
