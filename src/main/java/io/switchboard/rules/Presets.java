package io.switchboard.rules;

import java.util.ArrayList;
import java.util.List;

/**
 * Rules to start from ({@code rules: [{"preset": ...}]} in the config): reading inside the thread's
 * own directory, secrets left out, and a short list of commands that only look.
 */
public final class Presets {
  /** Secrets a read rule never covers: environment files, keys, git's own config. */
  public static final List<String> SECRETS = List.of("**/.env*", "**/*.pem", "**/*.key", "**/id_*", "**/.git/config",
      "**/.git/credentials", "**/.netrc", "**/.npmrc", "**/.pypirc");

  /** Commands that read and change nothing. */
  public static final List<List<String>> SAFE_COMMANDS = List.of(List.of("git", "status"), List.of("git", "diff"),
      List.of("git", "log"), List.of("git", "show"), List.of("ls"), List.of("pwd"));

  /** Words that make those commands write or run something: {@code --output=f}, an external diff, {@code -c x=y}. */
  public static final List<String> WRITING_WORDS = List.of("--output*", "-o", "--ext-diff", "--textconv", "-c",
      "--exec*", "--upload-pack*", "--config*");

  private Presets() {}

  /** The rules of preset {@code name}; {@code testCommand} (may be empty) joins the safe commands. */
  public static List<Rule> of(String name, List<String> testCommand) {
    return of(name, testCommand, java.util.Map.of());
  }

  /**
   * As {@link #of(String, List)}, and each project's own test command ({@code projectTests}: project
   * id to argv) a safe command in that project only.
   */
  public static List<Rule> of(String name, List<String> testCommand, java.util.Map<String, List<String>> projectTests) {
    if (!projectTests.isEmpty() && !name.equals("safeCommands")) {
      throw new IllegalArgumentException("projectTests: only goes with the safeCommands preset");
    }
    return switch (name) {
      case "readWorktree" -> List.of(new Rule("preset.readWorktree", 1, Rule.Effect.ALLOW,
          new Rule.Match(null, null, List.of("read", "search"), null, null, List.of("**"), SECRETS, null),
          Rule.Scope.EVERYWHERE, "preset", "config", 0, null, null, null,
          "reads and searches inside the thread's own directory, secrets excepted"));
      case "safeCommands" -> {
        List<Rule> rules = new ArrayList<>();
        List<List<String>> commands = new ArrayList<>(SAFE_COMMANDS);
        if (!testCommand.isEmpty()) {
          commands.add(testCommand);
        }
        for (List<String> c : commands) {
          rules.add(new Rule("preset.safeCommands." + String.join("-", c).replaceAll("[^A-Za-z0-9_.-]", "_"), 1,
              Rule.Effect.ALLOW, new Rule.Match(null, null, List.of("execute"), null, c, WRITING_WORDS, null, null,
                  null),
              Rule.Scope.EVERYWHERE, "preset", "config", 0, null, null, null, "a command that only looks"));
        }
        for (java.util.Map.Entry<String, List<String>> t : new java.util.TreeMap<>(projectTests).entrySet()) {
          if (t.getValue().isEmpty()) {
            throw new IllegalArgumentException("projectTests: the test command of project " + t.getKey()
                + " is empty");
          }
          rules.add(new Rule("preset.safeCommands." + t.getKey() + "." + String.join("-", t.getValue())
              .replaceAll("[^A-Za-z0-9_.-]", "_"), 1, Rule.Effect.ALLOW,
              new Rule.Match(null, List.of(t.getKey()), List.of("execute"), null, t.getValue(), WRITING_WORDS, null,
                  null, null),
              Rule.Scope.EVERYWHERE, "preset", "config", 0, null, null, null,
              "the test command of project " + t.getKey()));
        }
        yield rules;
      }
      default -> throw new IllegalArgumentException("preset: unknown \"" + name + "\" (known: readWorktree, "
          + "safeCommands)");
    };
  }
}
