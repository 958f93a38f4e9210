package io.switchboard.agent;

import io.switchboard.jsonrpc.StdioProcess;
import java.util.ArrayList;
import java.util.List;

/**
 * What the room's agents have asked of the gateway and the gateway still holds: output on its way
 * to the transcript (bytes) and permission requests waiting for an answer. Every event is committed
 * before it is published and every question takes memory until it ends, so an agent that writes
 * faster than the store commits, or asks thousands of questions at once, would otherwise fill the
 * heap. Over either limit the agent that adds to it is paused (its output waits in its pipe, read
 * but unhandled lines wait in its channel) until the room is back under both. One per agent room,
 * used on its event loop only.
 */
final class Backlog {
  static final long HIGH = 1024L * 1024;
  static final long LOW = 256L * 1024;
  private final int maxAsked;
  private long bytes;
  private int asked;
  private final List<StdioProcess> paused = new ArrayList<>();
  /** Terminal output the room's terminals may keep, in all ({@code Limits#terminalsBytes}). */
  private final long terminalBudget;
  private long terminalReserved;
  /** Images of queued and running prompts the room may hold, in all ({@code Limits#promptImageBytes}). */
  private final long imageBudget;
  private long imagesReserved;

  Backlog(int maxAsked, long terminalBudget, long imageBudget) {
    this.maxAsked = maxAsked;
    this.terminalBudget = terminalBudget;
    this.imageBudget = imageBudget;
  }

  /**
   * Reserves room for a terminal's kept output: what was asked, or less when the room's budget is
   * nearly spent; 0 when less than {@code minimum} is left (the terminal is refused).
   */
  int reserveTerminalOutput(int wanted, int minimum) {
    long left = terminalBudget - terminalReserved;
    int granted = (int) Math.min(wanted, Math.max(0, left));
    if (granted < Math.min(wanted, minimum)) {
      return 0;
    }
    terminalReserved += granted;
    return granted;
  }

  /** Holds {@code bytes} of prompt images until their turn ends; false when the room's budget would be passed. */
  boolean reserveImages(long bytes) {
    if (bytes > 0 && imagesReserved + bytes > imageBudget) {
      return false;
    }
    imagesReserved += bytes;
    return true;
  }

  void releaseImages(long bytes) {
    imagesReserved -= bytes;
  }

  void releaseTerminalOutput(int bytes) {
    terminalReserved -= bytes;
  }

  long terminalOutputReserved() {
    return terminalReserved;
  }

  /** Counts {@code n} bytes sent for recording by {@code source} (null: not from a process). */
  void add(long n, StdioProcess source) {
    bytes += n;
    pauseIfOver(source);
  }

  /** {@code n} bytes were recorded (or failed to be). */
  void done(long n) {
    bytes -= n;
    resumeIfUnder();
  }

  /** {@code source} asked a permission question. */
  void asked(StdioProcess source) {
    asked++;
    pauseIfOver(source);
  }

  /** A question ended (answered or cancelled). */
  void answered() {
    asked--;
    resumeIfUnder();
  }

  private void pauseIfOver(StdioProcess source) {
    if ((bytes > HIGH || asked >= maxAsked) && source != null && !paused.contains(source)) {
      paused.add(source);
      source.pause();
    }
  }

  private void resumeIfUnder() {
    if (bytes <= LOW && asked < maxAsked - maxAsked / 10 && !paused.isEmpty()) {
      paused.forEach(StdioProcess::resume);
      paused.clear();
    }
  }

  long bytes() {
    return bytes;
  }

  int asked() {
    return asked;
  }

  int paused() {
    return paused.size();
  }
}
