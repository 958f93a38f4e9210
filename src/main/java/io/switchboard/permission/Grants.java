package io.switchboard.permission;

import io.switchboard.rules.Rule;
import io.switchboard.rules.ToolFacts;
import java.nio.file.Path;
import java.util.List;

/**
 * The rule a person's "always" makes: as narrow as the request it answered. A command's words (or
 * the first of them the person kept), else the files it named inside the thread's directory, else
 * the hosts it fetched — never its title, nor a command that is not one plain command — with its
 * kind, its reach (this thread, project or agent) and its life.
 */
final class Grants {
  static final long DAY_MS = 24 * 60 * 60_000L;

  private Grants() {}

  static Rule rule(Answer.Grant grant, Registration reg, String id, String by, long now) {
    ToolFacts f = ToolFacts.of(reg.agentId(), reg.projectId(), reg.threadId(), reg.toolCall(),
        reg.cwd() == null ? null : Path.of(reg.cwd()));
    if (f.kind() == null) {
      throw new IllegalArgumentException("the agent gave this tool call no kind: the gateway cannot tell what an "
          + "\"always\" would cover; answer it once");
    }
    if (!f.doubts().isEmpty()) {
      throw new IllegalArgumentException("this tool call contradicts itself (" + String.join("; ", f.doubts())
          + "): answer it once");
    }
    if (f.command() == null && f.commandText() != null) {
      throw new IllegalArgumentException("this is no plain command (it joins or nests commands, "
          + "redirects, expands or quotes oddly: " + f.commandText().substring(0, Math.min(80,
          f.commandText().length())) + "): it can be answered once, never granted");
    }
    List<String> command = null;
    List<String> paths = null;
    List<String> domains = null;
    String title = null; // never: a grant matches only what the gateway can check
    if (f.command() != null) {
      command = grant.command() == null ? f.command() : grant.command();
      if (command.size() > f.command().size() || !f.command().subList(0, command.size()).equals(command)) {
        throw new IllegalArgumentException("grant.command must be the first words of the command asked about (\""
            + String.join(" ", f.command()) + "\"): a grant can be narrowed, never widened");
      }
    } else if (grant.command() != null) {
      throw new IllegalArgumentException("grant.command: this tool call runs no plain command");
    } else if (f.paths() != null && !f.paths().isEmpty()) {
      if (f.paths().stream().anyMatch(p -> p.inside() == null)) {
        throw new IllegalArgumentException("this tool call names a path outside the thread's directory: answer it once");
      }
      paths = f.paths().stream().map(p -> escape(p.inside())).toList();
    } else if (f.domains() != null && !f.domains().isEmpty()) {
      domains = f.domains();
    } else {
      // Never its title: the agent writes it, and "Check status" can name any command.
      throw new IllegalArgumentException("this tool call says too little for an \"always\": answer it once");
    }
    Rule.Scope scope = switch (grant.reach()) {
      case "project" -> {
        if (reg.projectId() == null) {
          throw new IllegalArgumentException("grant.reach project: this thread is in no project");
        }
        yield new Rule.Scope("project", reg.projectId());
      }
      case "agent" -> new Rule.Scope("agent", reg.agentId());
      default -> new Rule.Scope("thread", reg.threadId());
    };
    Long expires = grant.life().equals("day") ? now + DAY_MS : null;
    return new Rule(id, 1, Rule.Effect.ALLOW, new Rule.Match(null, null, List.of(f.kind()), title, command, null,
        paths, null, domains), scope, "grant", by, now, expires, null, null,
        "\"always\" on " + reg.toolCall().getString("title", "a tool call"));
  }

  /** Glob characters in a literal file name or title match only themselves. */
  private static String escape(String literal) {
    return literal.replaceAll("([*?\\[\\]{}\\\\])", "\\\\$1");
  }
}
