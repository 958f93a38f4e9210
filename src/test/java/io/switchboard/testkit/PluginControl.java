package io.switchboard.testkit;

import io.switchboard.config.PluginSpec;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** Drives a {@link FakePlugin} through its control folder and reads what it received. */
public final class PluginControl {
  public final Path dir;

  public PluginControl(Path dir) throws IOException {
    this.dir = Files.createDirectories(dir);
  }

  /** A plugin spec that runs the fake plugin with this control folder; anyone may prompt through it. */
  public PluginSpec spec(String id, String dialect, List<String> approvers, String... flags) {
    return spec(id, dialect, approvers, List.of(PluginSpec.ANYONE), flags);
  }

  /** The same with its list of who may prompt ({@code users}; null: not configured). */
  public PluginSpec spec(String id, String dialect, List<String> approvers, List<String> users, String... flags) {
    List<String> args = new ArrayList<>(List.of(dialect, dir.toString()));
    args.addAll(List.of(flags));
    // "cards-in-groups" is the plugin's cardsInGroups setting (the fake plugin ignores the flag).
    return new PluginSpec(id, dialect, AgentHarness.javaArgv(FakePlugin.class, args.toArray(String[]::new)), null,
        Map.of(), new JsonObject().put("bot_token", "test"), approvers, null, args.contains("cards-in-groups"), users);
  }

  /** A gateway config: its data in {@code dataDir}, the fast demo agent, and this fake plugin as {@code im}. */
  public JsonObject gatewayConfig(Path dataDir, String... flags) {
    List<String> args = new ArrayList<>(List.of("acp", dir.toString()));
    args.addAll(List.of(flags));
    return new JsonObject()
        .put("http", new JsonObject().put("port", 0))
        .put("dataDir", dataDir.toString())
        .put("agents", new io.vertx.core.json.JsonArray().add(new JsonObject().put("id", "demo").put("builtin", "demo")
            .put("env", new JsonObject().put("DEMO_AGENT_DELAY_MS", "3"))))
        .put("plugins", new io.vertx.core.json.JsonArray().add(new JsonObject().put("id", "im").put("dialect", "acp")
            .put("users", new io.vertx.core.json.JsonArray().add(PluginSpec.ANYONE))
            .put("command", new io.vertx.core.json.JsonArray(
                AgentHarness.javaArgv(FakePlugin.class, args.toArray(String[]::new))))));
  }

  public void act(JsonObject action) {
    try {
      Files.writeString(dir.resolve("in.jsonl"), action.encode() + "\n", StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Sets one of the plugin's modes ({@code acking}, {@code dieOnReceipt}, {@code stopReading}) and
   * returns once the plugin has taken it (it records each mode it sets).
   */
  public void set(JsonObject mode) {
    int before = (int) received().stream().filter(r -> "set".equals(r.getString("type"))).count();
    act(mode);
    awaitType("set", before + 1);
  }

  public void prompt(String chat, String sender, String text) {
    act(new JsonObject().put("prompt", text).put("chat", chat).put("sender", sender));
  }

  /** A prompt carrying the platform's id of the message (a redelivered message carries the same one). */
  public void prompt(String chat, String sender, String text, String messageId) {
    act(new JsonObject().put("prompt", text).put("chat", chat).put("sender", sender).put("messageId", messageId));
  }

  public void tap(String card, String optionId, String sender) {
    JsonObject tap = new JsonObject().put("card", card).put("optionId", optionId);
    if (sender != null) {
      tap.put("sender", sender);
    }
    act(new JsonObject().put("tap", tap));
  }

  public List<JsonObject> received() {
    Path out = dir.resolve("out.jsonl");
    try {
      if (!Files.exists(out)) {
        return List.of();
      }
      List<JsonObject> all = new ArrayList<>();
      for (String line : Files.readAllLines(out)) {
        if (!line.isBlank()) {
          try {
            all.add(new JsonObject(line));
          } catch (io.vertx.core.json.DecodeException halfWritten) {
            break; // the plugin is appending this line right now
          }
        }
      }
      return all;
    } catch (IOException e) {
      return List.of();
    }
  }

  public List<JsonObject> received(Predicate<JsonObject> which) {
    return received().stream().filter(which).toList();
  }

  /** Waits until at least {@code n} received records match, and returns the n-th. */
  public JsonObject await(Predicate<JsonObject> which, int n, String what) {
    PermissionHarness.waitFor(() -> received(which).size() >= n, what + "; the plugin saw " + summary());
    return received(which).get(n - 1);
  }

  public JsonObject awaitType(String type, int n) {
    return await(r -> type.equals(r.getString("type")), n, n + " x " + type);
  }

  public static Predicate<JsonObject> method(String method) {
    return r -> method.equals(r.getString("method"));
  }

  public String summary() {
    List<String> out = new ArrayList<>();
    for (JsonObject r : received()) {
      out.add(r.getString("type") + (r.containsKey("method") ? "(" + r.getString("method") + ")" : ""));
    }
    return String.join(", ", out);
  }
}
