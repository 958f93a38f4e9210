package io.switchboard.cluster;

import static io.switchboard.testkit.PermissionHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
 * The edge's router to the agent nodes over generated histories of two agent nodes: requests shown
 * (some of their facts lost, some repeated late), answers (some twice), nodes that leave, come back
 * as the same incarnation (a healed partition) or a new one (a restart, which voids what was
 * pending; its rooms' addresses registered a moment after it joined), nodes that stop answering
 * (paused), and replies lost on the way (a cut connection).
 * Fake agent nodes keep the ledger rules, answer keys included. For every history: an answer
 * reaches only the node that owns its request; a request is won by at most one answer, and an
 * answer to a pending request on a node that is there and answering wins it (told so even when its
 * first reply was lost: it is sent again with its key); a
 * node that is gone is refused at once as unavailable, and whatever waited on a node when it left
 * fails at once (no ask outlives the history: none waits for Vert.x's 30 s timeout); a lost fact
 * (a permission fact, or a thread fact: each kind numbered on its own) is noticed as a gap in
 * that node's sequence of it.
 */
class AgentNodesProperties {
  sealed interface Step permits Show, Answer, Leave, Join, Pause, Resume, Replay, LateLeave, LoseReply, ThreadFact {}

  /** A node shows a new request; its fact may be lost on the way. */
  record Show(int node, boolean lost) implements Step {}

  record Answer(int request, boolean twice) implements Step {}

  record Leave(int node) implements Step {}

  /** The node is a member again: the same incarnation (a heal) or a restarted one. */
  record Join(int node, boolean restarted) implements Step {}

  record Pause(int node) implements Step {}

  record Resume(int node) implements Step {}

  /** An old fact of a node arrives again, late. */
  record Replay(int node) implements Step {}

  /** The departure of a node's earlier start is heard after the restarted one joined. */
  record LateLeave(int node) implements Step {}

  /** The node's reply to the next answer it takes is lost on the way (a cut connection). */
  record LoseReply(int node) implements Step {}

  /** A thread of the node changed; the fact may be lost on the way. */
  record ThreadFact(int node, boolean lost) implements Step {}

  /** The router's look-up bound, shortened: a paused node holds a look-up this long. */
  static final long LOOK_UP_MS = 300;
  /**
   * "At once" for what waits on a node that left: far below the event bus's 30 s send timeout, which
   * is what it must not wait for; not a speed bound (a busy machine may take seconds to run the router).
   */
  static final long AT_ONCE_MS = 10_000;
  /** How often the router compares each node's fact count with what it heard, shortened. */
  static final long SEQUENCE_CHECK_MS = 100;
  /** How long after a restarted node joined its rooms' addresses are registered. */
  static final long REGISTER_DELAY_MS = 30;
  /** How long one try of an answer waits for its node, shortened. */
  static final long ANSWER_TRY_MS = 100;

  private Vertx vertx;
  private int history;

  @BeforeProperty
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterProperty
  void stop() {
    await(vertx.close());
  }

  @Provide
  Arbitrary<List<Step>> histories() {
    Arbitrary<Integer> node = Arbitraries.integers().between(0, 1);
    Arbitrary<Step> step = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, Combinators.combine(node, Arbitraries.of(false, false, false, true)).as(Show::new)),
        net.jqwik.api.Tuple.of(8, Combinators.combine(Arbitraries.integers().between(0, 9), Arbitraries.of(true, false))
            .as(Answer::new)),
        net.jqwik.api.Tuple.of(2, node.map(Leave::new)),
        net.jqwik.api.Tuple.of(2, Combinators.combine(node, Arbitraries.of(true, false)).as(Join::new)),
        net.jqwik.api.Tuple.of(1, node.map(Pause::new)),
        net.jqwik.api.Tuple.of(1, node.map(Resume::new)),
        net.jqwik.api.Tuple.of(1, node.map(Replay::new)),
        net.jqwik.api.Tuple.of(1, node.map(LateLeave::new)),
        net.jqwik.api.Tuple.of(2, node.map(LoseReply::new)),
        net.jqwik.api.Tuple.of(3, Combinators.combine(node, Arbitraries.of(false, false, true)).as(ThreadFact::new)));
    return step.list().ofMinSize(1).ofMaxSize(25);
  }

  @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
  boolean answersReachOnlyTheirOwnerOnceAndNothingWaitsOnAGoneNode(@ForAll("histories") List<Step> steps)
      throws Exception {
    new Run("h" + (history++)).play(steps);
    return true;
  }

  /** How a fake node numbers one kind of its facts, and what of them was lost. */
  private static final class Numbering {
    long seq;
    /** The gaps the router had reported of this kind when its last fact was lost; -1: none lost since. */
    int gapsAtLoss = -1;
    /** Whether a fact of this incarnation was lost and a later one delivered (a gap to notice). */
    boolean lostThenHeard;
    boolean lostSinceLastHeard;

    void restart() {
      seq = 0;
      lostSinceLastHeard = false;
      gapsAtLoss = -1;
    }
  }

  /** A fake agent node: its permission room's pending table and ledger, as far as the router sees them. */
  private final class FakeNode {
    final String name;
    String incarnation;
    String previousIncarnation;
    final Numbering permissions = new Numbering();
    final Numbering threads = new Numbering();
    boolean member = true;
    boolean running = true;
    boolean paused;
    final Set<String> pending = new HashSet<>();
    final Set<String> ended = new HashSet<>();
    final Set<String> owned = new HashSet<>();
    /** The key of the answer that won each request it ended by an answer. */
    final Map<String, String> wonWith = new HashMap<>();
    boolean loseNextReply;
    final List<String> answersReceived = new ArrayList<>();
    final List<Message<JsonObject>> held = new ArrayList<>();
    /** Every fact of this node that was delivered, with its address (a late copy may come again). */
    final List<Map.Entry<String, JsonObject>> facts = new ArrayList<>();
    final List<MessageConsumer<?>> consumers = new ArrayList<>();

    FakeNode(String name) {
      this.name = name;
      this.incarnation = name + "-1";
      serve();
    }

    void serve() {
      consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.onNode(name, Addresses.PERMISSION_ANSWER), m -> {
        if (paused) {
          held.add(m);
        } else {
          answer(m);
        }
      }));
      consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.onNode(name, Addresses.PERMISSION_STATUS), m -> {
        if (!paused) { // a paused node does not answer: the asker's bound ends it
          m.reply(new JsonObject().put("pending", pending.size()).put("node", name).put("incarnation", incarnation)
              .put("seq", permissions.seq));
        }
      }));
      consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.onNode(name, Addresses.THREAD_STATUS), m -> {
        if (!paused) {
          m.reply(new JsonObject().put("threads", 1).put("node", name).put("incarnation", incarnation)
              .put("seq", threads.seq));
        }
      }));
      consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.onNode(name, Addresses.STORE_LEDGER_GET), m -> {
        String id = m.body().getString("requestId");
        if (paused) {
          held.add(m);
          return;
        }
        m.reply(new JsonObject().put("request", owned.contains(id)
            ? new JsonObject().put("requestId", id).put("endedAt", ended.contains(id) ? 1L : null) : null));
      }));
    }

    void answer(Message<JsonObject> m) {
      String id = m.body().getString("requestId");
      if (m.address().endsWith(Addresses.STORE_LEDGER_GET.substring(2))) {
        m.reply(new JsonObject().put("request", owned.contains(id) ? new JsonObject().put("requestId", id) : null));
        return;
      }
      answersReceived.add(id);
      String key = m.body().getString("answerKey");
      boolean lose = loseNextReply;
      loseNextReply = false;
      if (pending.remove(id)) {
        ended.add(id);
        wonWith.put(id, key);
        if (!lose) {
          m.reply(new JsonObject().put("requestId", id));
        }
        publish(Addresses.PERMISSION_RESOLVED, id, false);
      } else if (ended.contains(id) && key != null && key.equals(wonWith.get(id))) {
        m.reply(new JsonObject().put("requestId", id).put("repeated", true)); // the winner, sent again
      } else if (ended.contains(id)) {
        ErrorCode.ALREADY_ANSWERED.fail(m, "request " + id + " was already answered");
      } else {
        ErrorCode.UNKNOWN_REQUEST.fail(m, "unknown request " + id);
      }
    }

    void publish(String address, String id, boolean lost) {
      boolean thread = address.equals(Addresses.THREAD_CHANGED);
      Numbering kind = thread ? threads : permissions;
      JsonObject fact = new JsonObject().put("threadId", "t-" + name).put("node", name)
          .put("incarnation", incarnation).put("seq", ++kind.seq);
      if (!thread) {
        fact.put("requestId", id);
      }
      if (lost) {
        kind.lostSinceLastHeard = true;
        return;
      }
      if (kind.lostSinceLastHeard) {
        kind.lostThenHeard = true;
        kind.lostSinceLastHeard = false;
      }
      facts.add(Map.entry(address, fact));
      vertx.eventBus().publish(address, fact);
    }

    void stopServing() {
      vertx.cancelTimer(registering);
      consumers.forEach(MessageConsumer::unregister);
      consumers.clear();
    }

    /** A restarted node's rooms register their addresses a moment after it joined, as real ones do. */
    long registering = -1;

    void serveSoon() {
      registering = vertx.setTimer(REGISTER_DELAY_MS, t -> serve());
    }
  }

  private final class Run {
    final String prefix;
    final List<FakeNode> nodes = new ArrayList<>();
    final List<String> requests = new ArrayList<>();
    final Map<String, FakeNode> owner = new HashMap<>();
    final List<Future<JsonObject>> asks = new ArrayList<>();
    /** The node each answer was meant for (its request's owner). */
    final Map<Future<JsonObject>, FakeNode> target = new java.util.IdentityHashMap<>();
    final Map<String, Integer> wins = new HashMap<>();
    final Map<String, Integer> gaps = new java.util.concurrent.ConcurrentHashMap<>();
    final Map<String, Integer> threadGaps = new java.util.concurrent.ConcurrentHashMap<>();
    Context context;
    AgentNodes router;
    MessageConsumer<JsonObject> members;

    Run(String prefix) {
      this.prefix = prefix;
    }

    /** Runs on the router's context: it is used from one event loop, as the rooms use it. */
    <T> T on(Supplier<T> action) throws Exception {
      CompletableFuture<T> result = new CompletableFuture<>();
      context.runOnContext(v -> {
        try {
          result.complete(action.get());
        } catch (Throwable t) {
          result.completeExceptionally(t);
        }
      });
      return result.get(10, TimeUnit.SECONDS);
    }

    void play(List<Step> steps) throws Exception {
      nodes.add(new FakeNode(prefix + "-a"));
      nodes.add(new FakeNode(prefix + "-b"));
      members = vertx.eventBus().localConsumer(Addresses.CLUSTER_MEMBERS, m -> {
        JsonArray list = new JsonArray();
        nodes.stream().filter(n -> n.member).forEach(n -> list.add(new JsonObject().put("node", n.name)
            .put("role", "agent").put("incarnation", n.incarnation)));
        m.reply(new JsonObject().put("members", list));
      });
      // The router lives in a verticle, as it does in the rooms that hold it: undeploying it at the
      // history's end ends its consumers and its periodic check (a router left running would hear
      // every later history's facts and keep asking its gone nodes: the property's CPU grew with each).
      String deployment = await(vertx.deployVerticle(new io.vertx.core.AbstractVerticle() {
        @Override
        public void start(io.vertx.core.Promise<Void> started) {
          Run.this.context = context; // the verticle's own
          router = new AgentNodes(vertx, true, LOOK_UP_MS, SEQUENCE_CHECK_MS, ANSWER_TRY_MS);
          router.start(member -> { }, node -> gaps.merge(node, 1, Integer::sum),
              node -> threadGaps.merge(node, 1, Integer::sum)).onComplete(started);
        }
      }));
      try {
        for (Step step : steps) {
          apply(step);
        }
        // Whatever still waits on a paused node ends when the cluster declares it gone.
        for (FakeNode n : nodes) {
          if (n.paused && n.member) {
            leave(n);
          }
        }
        check();
      } finally {
        members.unregister();
        nodes.forEach(FakeNode::stopServing);
        await(vertx.undeploy(deployment));
      }
    }

    void apply(Step step) throws Exception {
      if (step instanceof Show s) {
        FakeNode n = nodes.get(s.node());
        if (!n.running || n.paused) {
          return;
        }
        String id = prefix + "-r" + requests.size();
        requests.add(id);
        owner.put(id, n);
        n.owned.add(id);
        n.pending.add(id);
        if (s.lost()) {
          n.permissions.gapsAtLoss = gaps.getOrDefault(n.name, 0);
        }
        n.publish(Addresses.PERMISSION_SHOWN, id, s.lost());
        settle();
      } else if (step instanceof Answer a) {
        if (requests.isEmpty()) {
          return;
        }
        String id = requests.get(a.request() % requests.size());
        FakeNode n = owner.get(id);
        boolean wasPending = n.pending.contains(id);
        boolean reachable = n.member && n.running && !n.paused;
        List<Future<JsonObject>> sent = new ArrayList<>();
        for (int i = 0; i < (a.twice() ? 2 : 1); i++) {
          sent.add(on(() -> router.ask(Addresses.PERMISSION_ANSWER, new JsonObject().put("requestId", id)
              .put("optionId", "allow").put("surface", "web"))));
        }
        asks.addAll(sent);
        sent.forEach(f -> target.put(f, n));
        if (!reachable) {
          if (!n.member) {
            // Gone: refused by the router at once (or, when the router must look the request up and
            // a member is paused, within the look-up's bound).
            boolean slowLookUp = nodes.stream().anyMatch(o -> o.member && o.paused);
            for (Future<JsonObject> f : sent) {
              Throwable err = awaitFailure(f, slowLookUp ? LOOK_UP_MS + AT_ONCE_MS : AT_ONCE_MS);
              assertEquals(ErrorCode.UNAVAILABLE, ErrorCode.of(err), err.getMessage());
            }
          }
          return;
        }
        Future.join(sent).toCompletionStage().toCompletableFuture().exceptionally(x -> null).get(10, TimeUnit.SECONDS);
        long won = sent.stream().filter(Future::succeeded).count();
        if (wasPending) {
          assertEquals(1, won, "an answer to pending request " + id + " on a node that answers wins it, once");
        } else {
          assertEquals(0, won, "an ended request " + id + " is not won again");
        }
        sent.stream().filter(Future::failed).forEach(f -> {
          ErrorCode code = ErrorCode.of(f.cause());
          assertTrue(code == ErrorCode.ALREADY_ANSWERED || code == ErrorCode.UNKNOWN_REQUEST
              && !n.owned.contains(id), f.cause().getMessage());
        });
      } else if (step instanceof Leave l) {
        FakeNode n = nodes.get(l.node());
        if (n.member) {
          leave(n);
        }
      } else if (step instanceof Join j) {
        FakeNode n = nodes.get(j.node());
        if (n.member && !j.restarted()) {
          return;
        }
        if (j.restarted()) {
          // A restart: the old process is gone (what it held fails), the new one voids its pending.
          if (n.member) {
            leave(n);
          }
          n.stopServing();
          n.held.clear();
          n.paused = false;
          n.previousIncarnation = n.incarnation;
          n.incarnation = n.name + "-" + (Integer.parseInt(n.incarnation.substring(n.incarnation.lastIndexOf('-')
              + 1)) + 1);
          n.permissions.restart();
          n.threads.restart();
          n.serveSoon();
          for (String id : new ArrayList<>(n.pending)) {
            n.pending.remove(id);
            n.ended.add(id);
            n.publish(Addresses.PERMISSION_CANCELLED, id, false);
          }
        }
        n.member = true;
        n.running = true;
        vertx.eventBus().publish(Addresses.CLUSTER_MEMBER, new JsonObject().put("event", "joined").put("node", n.name)
            .put("role", "agent").put("incarnation", n.incarnation));
        settle();
      } else if (step instanceof ThreadFact f) {
        FakeNode n = nodes.get(f.node());
        if (!n.running || n.paused) {
          return;
        }
        if (f.lost()) {
          n.threads.gapsAtLoss = threadGaps.getOrDefault(n.name, 0);
        }
        n.publish(Addresses.THREAD_CHANGED, null, f.lost());
        settle();
      } else if (step instanceof LoseReply l) {
        nodes.get(l.node()).loseNextReply = true;
      } else if (step instanceof Pause p) {
        nodes.get(p.node()).paused = true;
      } else if (step instanceof Resume r) {
        FakeNode n = nodes.get(r.node());
        if (n.paused && n.running) {
          n.paused = false;
          List<Message<JsonObject>> held = new ArrayList<>(n.held);
          n.held.clear();
          held.forEach(n::answer);
          settle();
        }
      } else if (step instanceof LateLeave l) {
        FakeNode n = nodes.get(l.node());
        if (n.member && n.previousIncarnation != null) {
          vertx.eventBus().publish(Addresses.CLUSTER_MEMBER, new JsonObject().put("event", "left").put("node", n.name)
              .put("role", "agent").put("incarnation", n.previousIncarnation));
          settle(); // the node is still a member: answers to it must still win
        }
      } else if (step instanceof Replay r) {
        FakeNode n = nodes.get(r.node());
        if (!n.facts.isEmpty()) {
          Map.Entry<String, JsonObject> old = n.facts.get(0);
          vertx.eventBus().publish(old.getKey(), old.getValue().copy());
          settle();
        }
      }
    }

    void leave(FakeNode n) throws Exception {
      n.member = false;
      List<Future<JsonObject>> waiting = asks.stream().filter(f -> !f.isComplete() && target.get(f) == n).toList();
      vertx.eventBus().publish(Addresses.CLUSTER_MEMBER, new JsonObject().put("event", "left").put("node", n.name)
          .put("role", "agent").put("incarnation", n.incarnation));
      // What waited on it fails at once: far from the 30 s send timeout (AT_ONCE_MS) (an
      // answer still looking its request up also waits on the other nodes, a paused one for the
      // look-up's bound).
      boolean otherPaused = nodes.stream().anyMatch(o -> o != n && o.member && o.paused);
      for (Future<JsonObject> f : waiting) {
        awaitDone(f, otherPaused ? LOOK_UP_MS + AT_ONCE_MS : AT_ONCE_MS);
        assertEquals(ErrorCode.UNAVAILABLE, ErrorCode.of(f.cause()), "an answer waiting on " + n.name
            + " when it left");
      }
      settle();
    }

    void check() throws Exception {
      settle();
      for (Future<JsonObject> f : asks) {
        awaitDone(f); // none outlives the history
      }
      for (FakeNode n : nodes) {
        for (String id : n.answersReceived) {
          assertTrue(n.owned.contains(id), n.name + " received an answer to " + id + ", which it does not own");
        }
        if (n.permissions.lostThenHeard) {
          assertTrue(gaps.getOrDefault(n.name, 0) > 0, n.name + ": a lost fact went unnoticed");
        }
        if (n.threads.lostThenHeard) {
          assertTrue(threadGaps.getOrDefault(n.name, 0) > 0, n.name + ": a lost thread fact went unnoticed");
        }
      }
      // A lost fact with none after it is noticed at the router's periodic check, on a node that answers.
      for (FakeNode n : nodes) {
        if (n.member && n.running && !n.paused) {
          lastLossNoticed(n, n.permissions, gaps, "permission");
          lastLossNoticed(n, n.threads, threadGaps, "thread");
        }
      }
      // Each request is won at most once, at its owner.
      for (Future<JsonObject> f : asks) {
        if (f.succeeded()) {
          wins.merge(f.result().getString("requestId"), 1, Integer::sum);
        }
      }
      wins.forEach((id, count) -> assertEquals(1, count, "request " + id + " won " + count + " times"));
    }

    void lastLossNoticed(FakeNode n, Numbering kind, Map<String, Integer> gaps, String what) throws Exception {
      if (!kind.lostSinceLastHeard) {
        return;
      }
      // The periodic check notices it within a few periods; the bound is AT_ONCE_MS, not ten periods,
      // because a 2-core machine running other test JVMs can starve a loop for a second.
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AT_ONCE_MS);
      while (gaps.getOrDefault(n.name, 0) <= kind.gapsAtLoss && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(gaps.getOrDefault(n.name, 0) > kind.gapsAtLoss, n.name + ": its last " + what
          + " fact was lost, unnoticed");
    }

    /** Lets the facts just published reach the router. */
    void settle() throws Exception {
      on(() -> null);
      Thread.sleep(2);
      on(() -> null);
    }

    Throwable awaitFailure(Future<JsonObject> f, long ms) throws Exception {
      awaitDone(f, ms);
      assertTrue(f.failed(), "expected a refusal, got " + f.result());
      return f.cause();
    }

    void awaitDone(Future<JsonObject> f) throws Exception {
      awaitDone(f, AT_ONCE_MS);
    }

    void awaitDone(Future<JsonObject> f, long ms) throws Exception {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
      while (!f.isComplete() && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
      assertTrue(f.isComplete(), "an ask still waits " + ms + " ms after its node left or the history ended");
    }
  }
}
