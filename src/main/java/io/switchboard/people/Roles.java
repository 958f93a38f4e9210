package io.switchboard.people;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Roles as sets of permissions, the words the permission room (the one judge) and the surfaces check:
 * <ul>
 *   <li>{@code prompt}: prompt an agent (start and drive a thread);</li>
 *   <li>{@code approve:<kind>}: answer an agent's tool calls of that kind ({@code read}, {@code edit},
 *       {@code execute}, {@code fetch}, ...), {@code approve:*} every kind; a call without a kind needs
 *       {@code approve:*} (a missing fact never widens a permission);</li>
 *   <li>{@code answer}: answer an agent's questions;</li>
 *   <li>{@code rules}: make ("always") and revoke rules;</li>
 *   <li>{@code project}: commit, merge or discard a project's work;</li>
 *   <li>{@code people}: add, change and disable people, link their identities;</li>
 *   <li>{@code view}: see threads, cards and the ledger.</li>
 * </ul>
 * {@code *} is every permission. Presets: {@code owner} (everything), {@code operator} (all but managing
 * people), {@code approver} (answer calls and questions, view), {@code viewer}.
 */
public final class Roles {
  private Roles() {
  }

  public static final String PROMPT = "prompt";
  public static final String ANSWER = "answer";
  public static final String RULES = "rules";
  public static final String PROJECT = "project";
  public static final String PEOPLE = "people";
  public static final String VIEW = "view";
  public static final String ALL = "*";
  public static final String APPROVE_ANY = "approve:*";

  /** The kinds of tool call ACP names, each approvable on its own. */
  public static final List<String> KINDS = List.of("read", "edit", "delete", "move", "search", "execute", "think",
      "fetch", "switch_mode", "other");

  public static final Map<String, List<String>> PRESETS = Map.of(
      "owner", List.of(ALL),
      "operator", List.of(PROMPT, APPROVE_ANY, ANSWER, RULES, PROJECT, VIEW),
      "approver", List.of(APPROVE_ANY, ANSWER, VIEW),
      "viewer", List.of(VIEW));

  /** Every permission word a role may hold (the presets are made of them). */
  public static boolean isPermission(String word) {
    if (word == null) {
      return false;
    }
    if (word.startsWith("approve:")) {
      String kind = word.substring("approve:".length());
      return kind.equals("*") || KINDS.contains(kind);
    }
    return Set.of(ALL, PROMPT, ANSWER, RULES, PROJECT, PEOPLE, VIEW).contains(word);
  }

  /** The permissions of these roles; an unknown role gives none (and is refused where it is set). */
  public static Set<String> permissions(List<String> roles) {
    Set<String> out = new TreeSet<>();
    for (String role : roles) {
      out.addAll(PRESETS.getOrDefault(role, List.of()));
    }
    return out;
  }

  /** Whether {@code held} grants {@code needed} ({@code *} grants all; {@code approve:*} every kind). */
  public static boolean allows(Set<String> held, String needed) {
    if (held.contains(ALL) || held.contains(needed)) {
      return true;
    }
    return needed.startsWith("approve:") && held.contains(APPROVE_ANY);
  }

  /** What answering a tool call of {@code kind} needs: an unknown or missing kind needs {@code approve:*}. */
  public static String toApprove(String kind) {
    return kind != null && KINDS.contains(kind) ? "approve:" + kind : APPROVE_ANY;
  }
}
