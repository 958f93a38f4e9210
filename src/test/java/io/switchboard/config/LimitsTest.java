package io.switchboard.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class LimitsTest {
  private static final long MIB = 1024 * 1024;

  /** docs/architecture.md's table says what a 64 MiB heap gets: it must be what the code gives. */
  @Test
  void theDocumentedTableIsWhatTheCodeGivesA64MiBHeap() throws Exception {
    String doc = Files.readString(Path.of("docs/architecture.md"));
    Matcher row = Pattern.compile("(?m)^\\| `(\\w+)` \\|[^|]*\\|[^|]*\\| ([^|]+) \\|$").matcher(
        doc.substring(doc.indexOf("## Memory limits"), doc.indexOf("## Trust boundary")));
    Map<String, String> documented = new LinkedHashMap<>();
    while (row.find()) {
      documented.put(row.group(1), row.group(2).trim());
    }
    Limits limits = Limits.forHeap(64 * MIB);
    Map<String, String> actual = new LinkedHashMap<>();
    for (RecordComponent c : Limits.class.getRecordComponents()) {
      long value = ((Number) c.getAccessor().invoke(limits)).longValue();
      actual.put(c.getName(), c.getName().endsWith("Bytes") ? bytes(value) : String.format("%,d", value));
    }
    assertEquals(actual, documented, "docs/architecture.md's memory-limit table, row for row");
  }

  @Test
  void aLargeHeapIsCappedWhereMoreWouldNotHelpAndASmallOneStillAnswers() {
    Limits big = Limits.forHeap(24L * 1024 * MIB);
    assertEquals(8 * MIB, big.lineBytes());
    assertEquals(16 * MIB, big.fileReadBytes());
    assertEquals(4 * MIB, big.toolCallBytes());
    assertEquals(3 * 1024 * MIB, big.terminalsBytes(), "uncapped shares grow with the heap");
    Limits small = Limits.forHeap(MIB);
    assertEquals(100, small.pendingRequests(), "never fewer than 100 open questions");
    assertEquals(90, small.agentQuestions(), "agents are held a tenth under the permission room's limit");
    assertTrue(small.lineBytes() < small.processQueueBytes(), "a whole line always fits in a write queue");
  }

  private static String bytes(long n) {
    return n % MIB == 0 ? n / MIB + " MiB" : n / 1024 + " KiB";
  }
}
