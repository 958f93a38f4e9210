package io.switchboard.store;

import io.switchboard.bus.Addresses;
import io.switchboard.bus.ErrorCode;
import io.switchboard.bus.NodeScope;
import io.switchboard.store.WriteQueue.Write;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.jdbcclient.JDBCConnectOptions;
import io.vertx.jdbcclient.JDBCPool;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store room: the only owner of the SQLite file, serving it over the event bus. It runs the
 * migrations at start, then maps each address to a data-access method ({@link Ledger},
 * {@link Outbox}, {@link Threads}, {@link Transcripts}, {@link WebSessions}, {@link PluginChats}).
 *
 * <p>Writes go through the {@link WriteQueue} (one connection on one worker thread, committed in
 * groups); reads use a small pool of read-only connections (WAL lets them run beside the writer).
 * No JDBC call runs on an event loop. This class only turns messages into calls and results into
 * replies and failure codes.
 */
public final class StoreRoom extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(StoreRoom.class);

  private final Path databaseFile;
  private WriteQueue writes;
  private Pool readers;

  public StoreRoom(Path databaseFile) {
    this.databaseFile = databaseFile;
  }

  @Override
  public Future<?> start() {
    // Where this room serves its commands (a cluster node's own addresses; see NodeScope).
    NodeScope scope = NodeScope.of(config());
    LedgerChain.Head chainHead = new LedgerChain.Head();
    writes = new WriteQueue(vertx.createSharedWorkerExecutor("switchboard-store-writer-" + deploymentID(), 1),
        databaseFile, chainHead::forget);
    return writes.open().onSuccess(version -> {
      log.info("database {} ready at schema version {}", databaseFile, version);
      readers = JDBCPool.pool(vertx,
          new JDBCConnectOptions().setJdbcUrl("jdbc:sqlite:" + databaseFile + "?open_mode=1&busy_timeout=5000"),
          new PoolOptions().setMaxSize(2).setName("switchboard-store-readers-" + deploymentID()));
      var bus = vertx.eventBus();
      routes(new Ledger(readers, chainHead), new Outbox(readers), new Threads(readers), new Transcripts(readers),
          new WebSessions(readers), new PluginChats(readers), new PushSubscriptions(readers), new Rules(readers),
          new Usage(readers), new Health(), new People(readers))
          .forEach((address, handler) -> scope.serve(bus, address, handler));
    });
  }

  /** Every address the store serves, and what serves it (docs/event-bus.md is the contract). */
  private Map<String, Handler<Message<JsonObject>>> routes(Ledger ledger, Outbox outbox, Threads threads,
                                                           Transcripts transcripts, WebSessions webSessions,
                                                           PluginChats chats, PushSubscriptions push,
                                                           Rules rules, Usage usage, Health health, People people) {
    return Map.ofEntries(
        Map.entry(Addresses.STORE_LEDGER_APPEND, write(ledger::append)),
        Map.entry(Addresses.STORE_LEDGER_END, write(ledger::end)),
        Map.entry(Addresses.STORE_LEDGER_NOTE, write(ledger::note)),
        Map.entry(Addresses.STORE_LEDGER_ATTEND, write(ledger::attend)),
        Map.entry(Addresses.STORE_PUSH_SUBSCRIBE, write(push::subscribe)),
        Map.entry(Addresses.STORE_PUSH_UNSUBSCRIBE, write(push::unsubscribe)),
        Map.entry(Addresses.STORE_PUSH_LIST, read(push::list)),
        Map.entry(Addresses.STORE_PUSH_GET, read(push::get)),
        Map.entry(Addresses.STORE_RULES_APPEND, write(rules::append)),
        Map.entry(Addresses.STORE_RULES_SYNC, write(rules::sync)),
        Map.entry(Addresses.STORE_RULES_LIST, read(rules::list)),
        Map.entry(Addresses.STORE_USAGE_COST, write(usage::cost)),
        Map.entry(Addresses.STORE_USAGE_DAYS, read(usage::days)),
        Map.entry(Addresses.STORE_LEDGER_VOID_PENDING, write(ledger::voidPending)),
        Map.entry(Addresses.STORE_LEDGER_GET, read(ledger::get)),
        Map.entry(Addresses.STORE_LEDGER_LIST, read(ledger::list)),
        Map.entry(Addresses.STORE_HEALTH, write(health::check)),
        Map.entry(Addresses.STORE_THREAD_SAVE, write(threads::save)),
        Map.entry(Addresses.STORE_THREAD_ROUTE, write(threads::route)),
        Map.entry(Addresses.STORE_THREAD_DELETE, write(threads::delete)),
        Map.entry(Addresses.STORE_THREAD_LIST, read(threads::list)),
        Map.entry(Addresses.STORE_PROJECT_ACTION, write(threads::projectAction)),
        Map.entry(Addresses.STORE_PROJECT_ACTIONS, read(threads::projectActions)),
        Map.entry(Addresses.STORE_TRANSCRIPT_APPEND, transcriptWrite(transcripts::append)),
        Map.entry(Addresses.STORE_TRANSCRIPT_READ, read(transcripts::read)),
        Map.entry(Addresses.STORE_WEB_SESSION_SAVE, write(webSessions::save)),
        Map.entry(Addresses.STORE_WEB_SESSION_FORGET, write(webSessions::forget)),
        Map.entry(Addresses.STORE_WEB_SESSION_LIST, read(webSessions::list)),
        Map.entry(Addresses.STORE_PEOPLE_OWNER, write(people::ensureOwner)),
        Map.entry(Addresses.STORE_PEOPLE_SAVE, write(people::save)),
        Map.entry(Addresses.STORE_PEOPLE_LIST, read(people::list)),
        Map.entry(Addresses.STORE_PEOPLE_LINK, write(people::link)),
        Map.entry(Addresses.STORE_PEOPLE_UNLINK, write(people::unlink)),
        Map.entry(Addresses.STORE_PEOPLE_FIND, read(people::find)),
        Map.entry(Addresses.STORE_AUDIT_APPEND, write(people::audit)),
        Map.entry(Addresses.STORE_AUDIT_LIST, read(people::auditList)),
        Map.entry(Addresses.STORE_INBOUND_SEEN, read(chats::inboundSeen)),
        Map.entry(Addresses.STORE_INBOUND_MARK, write(chats::markInbound)),
        Map.entry(Addresses.STORE_CHAT_SCOPE_SAVE, write(chats::saveScope)),
        Map.entry(Addresses.STORE_CHAT_SCOPE_LIST, read(chats::listScopes)),
        Map.entry(Addresses.STORE_OUTBOX_ENQUEUE, write(outbox::enqueue)),
        Map.entry(Addresses.STORE_OUTBOX_ACK, write(outbox::ack)),
        Map.entry(Addresses.STORE_OUTBOX_REOPEN, write(outbox::reopenCards)),
        Map.entry(Addresses.STORE_OUTBOX_PENDING, read(outbox::pending)),
        Map.entry(Addresses.STORE_OUTBOX_STATS, read(outbox::stats)));
  }

  @Override
  public Future<?> stop() {
    // Writes already queued are committed before the file is closed.
    return writes.drained()
        .compose(v -> readers == null ? Future.succeededFuture() : readers.close())
        .compose(v -> writes.close());
  }

  /** A write that must survive a power loss once committed (synchronous=FULL). */
  private Handler<Message<JsonObject>> write(Function<JsonObject, Write> parse) {
    return m -> submit(m, parse, true);
  }

  /** A transcript write: its batch may commit at synchronous=NORMAL (a power loss may cost the last lines). */
  private Handler<Message<JsonObject>> transcriptWrite(Function<JsonObject, Write> parse) {
    return m -> submit(m, parse, false);
  }

  private void submit(Message<JsonObject> m, Function<JsonObject, Write> parse, boolean durable) {
    Write write;
    try {
      write = parse.apply(m.body() == null ? new JsonObject() : m.body());
    } catch (RuntimeException e) {
      ErrorCode.BAD_REQUEST.fail(m, "bad store write on " + m.address() + ": " + e.getMessage());
      return;
    }
    writes.submit(write, durable).onComplete(done -> settle(m, done));
  }

  private void settle(Message<JsonObject> m, AsyncResult<JsonObject> done) {
    if (done.succeeded()) {
      Object touched = done.result().remove(Outbox.TOUCHED);
      if (touched instanceof JsonArray plugins && !plugins.isEmpty()) {
        vertx.eventBus().publish(Addresses.OUTBOX_READY, new JsonObject().put("pluginIds", plugins));
      }
      m.reply(done.result());
    } else if (done.cause() instanceof StoreConflict conflict) {
      log.error("ledger write on {} refused: {}", m.address(), conflict.getMessage());
      ErrorCode.CONFLICT.fail(m, conflict.getMessage());
    } else {
      log.error("ledger write on {} failed", m.address(), done.cause());
      ErrorCode.STORE_FAILED.fail(m, "the database write failed: " + done.cause().getMessage());
    }
  }

  /** A read: a bad body (IllegalArgumentException) fails with BAD_REQUEST before any query. */
  private Handler<Message<JsonObject>> read(Function<JsonObject, Future<JsonObject>> query) {
    return m -> {
      Future<JsonObject> result;
      try {
        result = query.apply(m.body());
      } catch (IllegalArgumentException e) {
        ErrorCode.BAD_REQUEST.fail(m, e.getMessage());
        return;
      }
      result.onSuccess(m::reply).onFailure(err -> {
        log.error("ledger read on {} failed", m.address(), err);
        ErrorCode.STORE_FAILED.fail(m, "the database read failed: " + err.getMessage());
      });
    };
  }
}
