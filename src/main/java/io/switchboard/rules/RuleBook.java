package io.switchboard.rules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rules in force, newest version of each, and the one question asked of them: does a rule
 * answer this request? The strictest matching effect wins (deny over ask over allow), so a
 * person's "allow" can never outvote a "deny", and an "ask" rule brings the card back; nothing
 * matching means a person is asked. Not thread-safe: the permission room's own loop owns it.
 */
public final class RuleBook {
  /** The newest version of each rule, by id, in the order they were made. */
  private final Map<String, Rule> rules = new LinkedHashMap<>();

  /** What decided a request: the rule (and version) and the fields that matched. */
  public record Decision(Rule rule, List<String> matched) {
    public Rule.Effect effect() {
      return rule.effect();
    }
  }

  /** Adds a rule or replaces it by its newer version (a revocation is one). */
  public void put(Rule rule) {
    Rule known = rules.get(rule.id());
    if (known == null || known.version() < rule.version()) {
      rules.put(rule.id(), rule);
    }
  }

  public Rule get(String id) {
    return rules.get(id);
  }

  public List<Rule> all() {
    return new ArrayList<>(rules.values());
  }

  /** The deciding rule for {@code facts} at {@code now}, or null: a person decides. */
  public Decision decide(ToolFacts facts, long now) {
    Decision best = null;
    for (Rule r : rules.values()) {
      if (!r.active(now) || !r.scope().covers(facts)) {
        continue;
      }
      List<String> matched = r.match().test(facts, r.effect() == Rule.Effect.ALLOW);
      if (matched != null && (best == null || r.effect().ordinal() > best.effect().ordinal())) {
        best = new Decision(r, matched);
      }
    }
    return best;
  }
}
