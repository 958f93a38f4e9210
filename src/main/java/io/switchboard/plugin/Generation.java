package io.switchboard.plugin;

import io.switchboard.jsonrpc.JsonRpcPeer;
import io.switchboard.jsonrpc.StdioProcess;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.HashMap;
import java.util.HashSet;
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
  /** chatId -> the thread this process was told the chat is in (_va/session_info). */
  final Map<String, String> toldSession = new HashMap<>();

  Generation(int number) {
    this.number = number;
  }

  /** Writes a notification to this process. */
  Future<Void> send(Dialect.Out out) {
    return peer.notify(out.method(), out.params());
  }

  /** Writes a request to this process; the future is its answer. */
  Future<Object> ask(Dialect.Out out) {
    return peer.request(out.method(), out.params());
  }
}
