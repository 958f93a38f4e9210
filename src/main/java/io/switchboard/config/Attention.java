package io.switchboard.config;

import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a waiting permission request draws a person's attention (docs/operations.md, "Attention"):
 * the built-in defaults, overridden field by field by the config's top-level {@code attention},
 * then the asking agent's, then the thread's project's (the most specific wins).
 */
public record Attention(Spec defaults, Map<String, Spec> byAgent, Map<String, Spec> byProject) {
  /** A request is reminded of after five minutes; nothing escalates or expires unless configured. */
  public static final long DEFAULT_REMIND_MS = 5 * 60_000;

  public static final Attention DEFAULT = new Attention(Spec.NONE, Map.of(), Map.of());

  public Attention {
    defaults = defaults == null ? Spec.NONE : defaults;
    byAgent = byAgent == null ? Map.of() : Map.copyOf(byAgent);
    byProject = byProject == null ? Map.of() : Map.copyOf(byProject);
  }

  /** What happens at expiry: the agent gets a reject-kind option (never an allow), or its turn is cancelled. */
  public enum OnExpiry {
    REJECT("reject"), CANCEL_TURN("cancelTurn");

    public final String key;

    OnExpiry(String key) {
      this.key = key;
    }

    public static OnExpiry parse(String s) {
      for (OnExpiry o : values()) {
        if (o.key.equals(s)) {
          return o;
        }
      }
      throw new IllegalArgumentException("must be reject or cancelTurn, got \"" + s + "\"");
    }
  }

  /**
   * Quiet hours in the gateway host's time zone (or {@code zone}): reminders, escalations and
   * pushes due inside them wait for their end. {@code from} after {@code to} spans midnight.
   */
  public record QuietHours(LocalTime from, LocalTime to, ZoneId zone) {
    /** The first moment at or after {@code at} outside quiet hours. */
    public long nextAllowed(long at) {
      ZonedDateTime t = Instant.ofEpochMilli(at).atZone(zone);
      LocalTime now = t.toLocalTime();
      boolean quiet = from.isBefore(to) ? !now.isBefore(from) && now.isBefore(to)
          : !now.isBefore(from) || now.isBefore(to);
      if (!quiet) {
        return at;
      }
      ZonedDateTime end = t.with(to);
      if (!end.isAfter(t)) {
        end = end.plusDays(1);
      }
      return end.toInstant().toEpochMilli();
    }
  }

  /**
   * One level's settings; a null field is "not said here" (the level below decides), 0 for a delay
   * is "off". {@code escalateTo}: the chat surfaces ({@code <plugin>:<chat>}) that get the card
   * at escalation.
   */
  public record Spec(Long remindAfterMs, Long escalateAfterMs, List<String> escalateTo, Long deadlineMs,
                     OnExpiry onExpiry, QuietHours quietHours) {
    public static final Spec NONE = new Spec(null, null, null, null, null, null);

    public Spec {
      escalateTo = escalateTo == null ? null : List.copyOf(escalateTo);
    }

    Spec over(Spec base) {
      return new Spec(remindAfterMs != null ? remindAfterMs : base.remindAfterMs,
          escalateAfterMs != null ? escalateAfterMs : base.escalateAfterMs,
          escalateTo != null ? escalateTo : base.escalateTo,
          deadlineMs != null ? deadlineMs : base.deadlineMs,
          onExpiry != null ? onExpiry : base.onExpiry,
          quietHours != null ? quietHours : base.quietHours);
    }
  }

  /**
   * The plan for a request of {@code agentId} in {@code projectId} (either may be null). The
   * deadline's rule names where it was configured, so every surface can say which rule expired it.
   */
  public Resolved resolve(String agentId, String projectId) {
    Spec agent = agentId == null ? null : byAgent.get(agentId);
    Spec project = projectId == null ? null : byProject.get(projectId);
    Spec s = defaults;
    if (agent != null) {
      s = agent.over(s);
    }
    if (project != null) {
      s = project.over(s);
    }
    String deadlineFrom = project != null && project.deadlineMs() != null ? "project " + projectId
        : agent != null && agent.deadlineMs() != null ? "agent " + agentId : "the gateway's attention settings";
    long deadline = s.deadlineMs() == null ? 0 : s.deadlineMs();
    return new Resolved(s.remindAfterMs() == null ? DEFAULT_REMIND_MS : s.remindAfterMs(),
        s.escalateAfterMs() == null ? 0 : s.escalateAfterMs(),
        s.escalateTo() == null ? List.of() : s.escalateTo(), deadline,
        s.onExpiry() == null ? OnExpiry.REJECT : s.onExpiry(), s.quietHours(),
        deadline == 0 ? null : "deadline " + Durations.format(deadline) + " of " + deadlineFrom);
  }

  /** A request's effective settings: delays in ms (0 = off), and the words naming its deadline's rule. */
  public record Resolved(long remindAfterMs, long escalateAfterMs, List<String> escalateTo, long deadlineMs,
                         OnExpiry onExpiry, QuietHours quietHours, String deadlineRule) {
    /** The steps of a request created at {@code createdAt}: each once, at its time. */
    public List<Step> steps(long createdAt, boolean pushNow) {
      List<Step> steps = new ArrayList<>();
      if (!pushNow) {
        steps.add(new Step("push", quiet(createdAt)));
      }
      if (remindAfterMs > 0) {
        steps.add(new Step("remind", quiet(createdAt + remindAfterMs)));
      }
      if (escalateAfterMs > 0) {
        steps.add(new Step("escalate", quiet(createdAt + escalateAfterMs)));
      }
      if (deadlineMs > 0) {
        steps.add(new Step("expire", createdAt + deadlineMs)); // a deadline is kept in quiet hours too
      }
      return steps;
    }

    /** Whether the first push may go with the card itself (not in quiet hours). */
    public boolean pushesAt(long at) {
      return quiet(at) == at;
    }

    private long quiet(long at) {
      return quietHours == null ? at : quietHours.nextAllowed(at);
    }

    public Long deadlineAt(long createdAt) {
      return deadlineMs == 0 ? null : createdAt + deadlineMs;
    }
  }

  /** One step of a plan: {@code push}, {@code remind}, {@code escalate} or {@code expire}. */
  public record Step(String name, long at) {}
}
