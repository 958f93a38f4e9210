package io.switchboard.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HexFormat;

/**
 * The ledger's tamper evidence. Each request row carries a digest of exactly what was asked (its
 * tool call and options as stored), and each audit event a SHA-256 hash chained to the event
 * before it: the hash covers the previous hash, the event's own fields, and what the event
 * vouches for (for {@code registered}, the request's digest; for an end, the end state written on
 * the request row). Editing, inserting or deleting an event, or editing what a request asked or
 * how it ended, breaks the chain at that point; {@code ledger verify} walks it and names the first
 * broken link. (Cutting events off the end leaves a shorter valid chain: the chain proves
 * integrity, not completeness.)
 */
final class LedgerChain {
  /** The hash the first chained event links to. */
  static final String GENESIS = "switchboard-ledger-v1";

  private LedgerChain() {}

  /** What a request asked, as stored. */
  static String digest(String toolCall, String options) {
    return sha256("request", toolCall, options);
  }

  /** What an end event vouches for: the request row's end columns. */
  static String endState(String state, String optionId, String optionKind, String reason, String surface,
                         String user, Long endedAt, String answer, String person) {
    String columns = String.join("\u001f", String.valueOf(state), String.valueOf(optionId),
        String.valueOf(optionKind), String.valueOf(reason), String.valueOf(surface), String.valueOf(user),
        String.valueOf(endedAt));
    // A question's answer (as kept) and the person who answered are vouched for too; rows without them
    // hash as they always did.
    String withAnswer = answer == null ? columns : columns + "\u001f" + answer;
    return person == null ? withAnswer : withAnswer + "\u001fperson\u001f" + person;
  }

  static String link(String previous, String requestId, long at, String event, String surface, String user,
                     String detail, String vouches) {
    return sha256(previous, requestId, Long.toString(at), event, String.valueOf(surface), String.valueOf(user),
        String.valueOf(detail), String.valueOf(vouches));
  }

  /** The newest event's hash, or {@link #GENESIS} when no event is chained yet. */
  static String head(Connection conn) throws SQLException {
    try (PreparedStatement st = conn.prepareStatement(
        "SELECT hash FROM permission_event WHERE hash IS NOT NULL ORDER BY id DESC LIMIT 1");
         ResultSet rs = st.executeQuery()) {
      return rs.next() ? rs.getString(1) : GENESIS;
    }
  }

  /** The newest event's hash as the writer last wrote it; forgotten at a rollback and read again. Writer thread only. */
  static final class Head {
    private String hash;

    String get(Connection conn) throws SQLException {
      if (hash == null) {
        hash = head(conn);
      }
      return hash;
    }

    void moveTo(String newest) {
      hash = newest;
    }

    void forget() {
      hash = null;
    }
  }

  private static String sha256(String... parts) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (String part : parts) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        // Length-prefixed: no two different field lists hash the same bytes.
        md.update(Integer.toString(bytes.length).getBytes(StandardCharsets.US_ASCII));
        md.update((byte) ':');
        md.update(bytes);
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
