package io.switchboard.agent;

import java.nio.charset.StandardCharsets;

/**
 * The last {@code capacity} bytes a terminal wrote, filled by its reader thread and read on the
 * event loop: a ring that grows up to its capacity and then overwrites its oldest bytes, so a
 * command that writes without end ({@code yes}) costs a bounded buffer and one copy per read, and
 * nothing reaches the event loop per chunk.
 */
final class OutputRing {
  private static final int FIRST_SIZE = 8 * 1024;

  private final int capacity;
  private byte[] buffer;
  /** Index of the oldest byte kept. */
  private int head;
  private int size;
  private long written;

  OutputRing(int capacity) {
    this.capacity = Math.max(0, capacity);
    this.buffer = new byte[Math.min(this.capacity, FIRST_SIZE)];
  }

  /** Appends bytes (the reader thread). */
  synchronized void write(byte[] bytes, int offset, int length) {
    written += length;
    if (capacity == 0) {
      return;
    }
    if (length >= capacity) {
      // Only the tail of this chunk survives.
      ensure(capacity);
      System.arraycopy(bytes, offset + length - capacity, buffer, 0, capacity);
      head = 0;
      size = capacity;
      return;
    }
    ensure(Math.min(capacity, size + length));
    for (int i = 0; i < length; ) {
      int tail = (head + size) % buffer.length;
      if (size == buffer.length) {
        // Full at capacity: overwrite the oldest byte and move the head on.
        int n = Math.min(length - i, buffer.length - head);
        System.arraycopy(bytes, offset + i, buffer, head, n);
        head = (head + n) % buffer.length;
        i += n;
      } else {
        int n = Math.min(length - i, Math.min(buffer.length - size, buffer.length - tail));
        System.arraycopy(bytes, offset + i, buffer, tail, n);
        size += n;
        i += n;
      }
    }
  }

  /** Grows the buffer (never past the capacity), keeping the bytes in order from index 0. */
  private void ensure(int needed) {
    if (needed <= buffer.length) {
      return;
    }
    int grown = buffer.length == 0 ? FIRST_SIZE : buffer.length;
    while (grown < needed) {
      grown *= 2;
    }
    byte[] next = new byte[Math.min(capacity, grown)];
    copyOut(next);
    buffer = next;
    head = 0;
  }

  private void copyOut(byte[] into) {
    int first = Math.min(size, buffer.length - head);
    System.arraycopy(buffer, head, into, 0, first);
    System.arraycopy(buffer, 0, into, first, size - first);
  }

  /** Whether bytes were dropped from the front. */
  synchronized boolean truncated() {
    return written > size;
  }

  /** What is kept, as text; when the front was cut, it starts on a character boundary. */
  synchronized String text() {
    byte[] out = new byte[size];
    copyOut(out);
    int from = 0;
    if (written > size) {
      while (from < out.length && (out[from] & 0xC0) == 0x80) {
        from++;
      }
    }
    return new String(out, from, out.length - from, StandardCharsets.UTF_8);
  }
}
