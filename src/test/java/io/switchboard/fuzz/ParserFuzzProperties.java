package io.switchboard.fuzz;

import io.switchboard.cli.CommandLine;
import io.switchboard.cli.UsageException;
import io.switchboard.config.ConfigException;
import io.switchboard.config.SettingsLoader;
import io.switchboard.jsonrpc.JsonRpcPeer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The parsers that face input: hostile input is refused with the parser's own error, never an
 * uncaught exception, and changes nothing it should not.
 */
class ParserFuzzProperties {

  /** Agent and plugin lines: the JSON-RPC reader never throws, answers only what has an id, keeps our requests. */
  @Property(tries = 3_000)
  void rpcLinesNeverBreakTheConnection(@ForAll("lines") List<String> lines) {
    List<JsonObject> written = new ArrayList<>();
    JsonRpcPeer peer = new JsonRpcPeer("fuzz", line -> {
      written.add(new JsonObject(line)); // everything we write is a JSON object
      return Future.succeededFuture();
    });
    peer.handler(new JsonRpcPeer.Handler() {
      public Future<Object> request(String method, Object params) {
        return Future.succeededFuture(new JsonObject());
      }

      public void notification(String method, Object params) {
      }
    });
    Future<Object> ours = peer.request("session/prompt", new JsonObject()); // id 0
    for (String line : lines) {
      peer.receive(line);
    }
    for (JsonObject w : written.subList(1, written.size())) {
      if (!"2.0".equals(w.getString("jsonrpc")) || !w.containsKey("id")) {
        throw new AssertionError("wrote something that is not a JSON-RPC response: " + w);
      }
    }
    boolean answered = lines.stream().anyMatch(l -> {
      try {
        JsonObject m = new JsonObject(l);
        return !m.containsKey("method") && m.getValue("id") instanceof Number n && n.doubleValue() == 0
            && (m.containsKey("result") || m.containsKey("error"));
      } catch (RuntimeException e) {
        return false;
      }
    });
    if (ours.isComplete() != answered) {
      throw new AssertionError("our request was " + (ours.isComplete() ? "" : "not ") + "completed by " + lines);
    }
  }

  @Provide
  Arbitrary<List<String>> lines() {
    return Inputs.line().list().ofMaxSize(8);
  }

  /** The config file: any JSON tree gives settings or a ConfigException naming a key. */
  @Property(tries = 3_000)
  void configTreesGiveSettingsOrANamedError(@ForAll("configs") JsonObject tree) {
    try {
      SettingsLoader.parse(tree);
    } catch (ConfigException e) {
      if (e.key() == null || e.key().isEmpty()) {
        throw new AssertionError("an error that names no key: " + e.getMessage());
      }
    }
  }

  @Provide
  Arbitrary<JsonObject> configs() {
    // Mutations of the defaults: a key set to a hostile value, removed, or added.
    return Arbitraries.of("http", "dataDir", "defaultAgent", "agents", "plugins", "logFormat", "projects",
        "defaultProject", "extra")
        .flatMap(key -> Inputs.json(3).map(value -> {
          JsonObject tree = SettingsLoader.defaults();
          if (value == null) {
            tree.remove(key);
          } else {
            tree.put(key, value);
          }
          return tree;
        }));
  }

  /** The command line: any argv gives a command or a UsageException. */
  @Property(tries = 3_000)
  void argvGivesACommandOrAUsageError(@ForAll("argvs") List<String> argv) {
    try {
      CommandLine.parse(argv);
    } catch (UsageException expected) {
      // refused with a message naming the argument
    }
  }

  @Provide
  Arbitrary<List<String>> argvs() {
    return Arbitraries.oneOf(
        Arbitraries.of("serve", "token", "doctor", "ledger", "--rotate", "--json", "--state", "--limit", "--port",
            "--port=", "--config", "--data-dir", "--host", "--log-format", "--help", "--version", "-", "--", "0",
            "pending", "all", "x", "--limit=9999999999", "--state=", "=", "--=x"),
        Arbitraries.strings().ofMaxLength(8)).list().ofMaxSize(6);
  }
}
