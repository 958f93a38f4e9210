package io.switchboard.plugin;

import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.jsonrpc.StdioProcess;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One spawn of a plugin: its process, its JSON-RPC peer, and what was sent to it and not yet
 * acknowledged. {@link PluginProcess} makes it and settles it when it dies; every asynchronous
 * continuation checks it is still the current one.
 */
final class Generation {
  final int number;
  StdioProcess process;
  JsonRpcPeer peer;
  /** It answered initialize. */
  boolean ready;
  /**
   * It can show what it is sent. An acp plugin can once it answered initialize; VibeAround's SDK
   * makes its renderer only after the platform answered (Telegram's getMe) and drops what comes
   * before, so a vibearound plugin can once it sent a heartbeat or a prompt (both start after the
   * renderer exists; docs/protocol-plugins.md).
   */
  boolean rendering;
  long watchdog = -1;
  /** Outputs written to this generation and not yet acknowledged. */
  final Set<String> sent = new HashSet<>();
  final Map<String, Promise<Void>> ackWaiters = new HashMap<>();
  /** chatId -> the agent session this process was told the chat is in (_va/session_info): thread NUL session. */
  final Map<String, String> toldSession = new HashMap<>();
  /** chatId -> live output held while the chat's session info is looked up: it follows that info, in order. */
  private final Map<String, Held> held = new HashMap<>();

  /**
   * What a chat's held output may take, encoded ({@code Limits#processQueueBytes}, as the process's
   * own write queue): an agent that talks on while the session info is looked up cannot fill the heap.
   */
  private final long maxHeldBytes;

  /** Live output waiting for a chat's session info, what it takes, and whoever waits for it to be written. */
  private static final class Held {
    final List<Dialect.Out> outs = new ArrayList<>();
    final Promise<Void> written = Promise.promise();
    long bytes;
  }

  Generation(int number, long maxHeldBytes) {
    this.number = number;
    this.maxHeldBytes = maxHeldBytes;
  }

  /** Writes a notification to this process. */
  Future<Void> send(Dialect.Out out) {
    return peer.notify(out.method(), out.params());
  }

  /** Writes a chat's live output, or holds it behind the chat's session info ({@link #hold}). */
  void stream(String chatId, Dialect.Out out) {
    Held h = held.get(chatId);
    if (h == null) {
      send(out);
      return;
    }
    h.outs.add(out);
    h.bytes += out.params().encode().length();
    if (h.bytes > maxHeldBytes) {
      // The info is late and the agent talks on: what is held goes now, in order (the process's
      // write queue bounds it from here); the info follows when it comes.
      release(chatId, null);
    }
  }

  /** The chat's live output waits from now on until {@link #release}. */
  void hold(String chatId) {
    held.computeIfAbsent(chatId, c -> new Held());
  }

  /** Writes {@code first} (when not null), then the chat's held output. */
  void release(String chatId, Dialect.Out first) {
    Held h = held.remove(chatId);
    if (first != null) {
      send(first);
    }
    if (h != null) {
      h.outs.forEach(this::send);
      h.written.complete();
    }
  }

  /** Completes once the chat's held live output is written (at once when none is held). */
  Future<Void> flushed(String chatId) {
    Held h = held.get(chatId);
    return h == null ? Future.succeededFuture() : h.written.future();
  }

  /** Writes a request to this process; the future is its answer. */
  Future<Object> ask(Dialect.Out out) {
    return peer.request(out.method(), out.params());
  }
}
