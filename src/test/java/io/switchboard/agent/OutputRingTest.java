package io.switchboard.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The terminal output ring keeps exactly the last bytes written, whatever the chunk sizes. */
class OutputRingTest {

  @Test
  void keepsTheLastCapacityBytesAcrossRandomChunks() {
    Random random = new Random(42);
    for (int round = 0; round < 200; round++) {
      int capacity = 1 + random.nextInt(40_000);
      OutputRing ring = new OutputRing(capacity);
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      int chunks = 1 + random.nextInt(60);
      for (int c = 0; c < chunks; c++) {
        byte[] chunk = new byte[random.nextInt(random.nextBoolean() ? 100 : 50_000)];
        for (int i = 0; i < chunk.length; i++) {
          chunk[i] = (byte) ('a' + random.nextInt(26));
        }
        int offset = chunk.length == 0 ? 0 : random.nextInt(chunk.length);
        ring.write(chunk, offset, chunk.length - offset);
        all.write(chunk, offset, chunk.length - offset);
      }
      byte[] written = all.toByteArray();
      byte[] expected = Arrays.copyOfRange(written, Math.max(0, written.length - capacity), written.length);
      assertEquals(new String(expected, StandardCharsets.UTF_8), ring.text(), "round " + round);
      assertEquals(written.length > capacity, ring.truncated(), "round " + round);
    }
  }

  @Test
  void aCutFrontStartsOnACharacterBoundary() {
    OutputRing ring = new OutputRing(51);
    byte[] text = "\u00e9".repeat(40).getBytes(StandardCharsets.UTF_8); // 80 bytes, two a character
    ring.write(text, 0, text.length);
    assertEquals("\u00e9".repeat(25), ring.text());
    assertTrue(ring.truncated());
  }

  @Test
  void nothingKeptWithAZeroLimitAndNothingCutBelowIt() {
    OutputRing none = new OutputRing(0);
    none.write(new byte[] {'x'}, 0, 1);
    assertEquals("", none.text());
    OutputRing room = new OutputRing(10);
    room.write("abc".getBytes(StandardCharsets.UTF_8), 0, 3);
    assertEquals("abc", room.text());
    assertFalse(room.truncated());
  }
}
