package io.switchboard.config;

/**
 * Every memory bound of the gateway, in bytes (or characters) and derived from the heap in this one
 * place, so that what an agent, a plugin or a browser can make the gateway hold grows with the heap
 * it was given and never past it. Made once at start ({@link #ofThisJvm()}) and handed to the rooms.
 * The figures at -Xmx64m, the heap the systemd unit gives, are in docs/architecture.md.
 *
 * @param lineBytes          the longest line read from a child process (agent or plugin)
 * @param processQueueBytes  what may wait to be written to one child's stdin
 * @param fileReadBytes      the largest file one {@code fs/read_text_file} returns
 * @param terminalBytes      what one terminal may keep of its output (its ring buffer, at most)
 * @param terminalsBytes     what all terminals of the agent room keep, together
 * @param toolCallBytes      the tool-call updates one session keeps, to merge later updates into
 * @param replyChars         the text of one turn a plugin gathers for a chat's reply
 * @param socketQueueBytes   what may wait to be sent to one browser socket before it is closed
 * @param socketsQueueBytes  what may wait to be sent to all browser sockets together
 * @param pendingRequests    permission requests open at once (each also counted in bytes below)
 * @param pendingBytes       what the open permission requests hold, together
 * @param promptImageBytes   the images of prompts waiting for (or in) a turn, together, as the base64 held
 */
public record Limits(int lineBytes, long processQueueBytes, long fileReadBytes, int terminalBytes,
                     long terminalsBytes, long toolCallBytes, int replyChars, int socketQueueBytes,
                     long socketsQueueBytes, int pendingRequests, long pendingBytes, long promptImageBytes) {
  private static final long MIB = 1024 * 1024;

  /** The limits for a heap of {@code heap} bytes: each a share of it, some also capped where more would not help. */
  public static Limits forHeap(long heap) {
    return new Limits(
        (int) Math.min(8 * MIB, heap / 16),
        Math.min(64 * MIB, heap / 8),
        Math.min(16 * MIB, heap / 16),
        (int) Math.min(16 * MIB, heap / 16),
        heap / 8,
        Math.min(4 * MIB, heap / 256),
        (int) Math.min(MIB, heap / 64),
        (int) Math.min(4 * MIB, heap / 16),
        Math.min(64 * MIB, heap / 8),
        // A pending request is counted at 20 KiB here; pendingBytes bounds what they really hold.
        (int) Math.min(Integer.MAX_VALUE, Math.max(100, heap / (20 * 1024))),
        heap / 4,
        heap / 16);
  }

  /** The limits for this JVM's maximum heap ({@code -Xmx}). */
  public static Limits ofThisJvm() {
    return forHeap(Runtime.getRuntime().maxMemory());
  }

  /**
   * The permission questions the agents may have open at once: a tenth under the permission room's
   * own limit, so that it rarely has to refuse one (docs/architecture.md).
   */
  public int agentQuestions() {
    return pendingRequests - pendingRequests / 10;
  }
}
