package io.switchboard.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a tree's kill signals and waits for, against real processes. */
class ProcessTreeTest {
  /**
   * A zombie (exited, its parent never collects it) is dead: nothing to signal, nothing to wait for.
   * Counted as running, the kill would wait out its whole grace (a minute here) and say it signalled one.
   */
  @Test
  void aZombieIsNeitherSignalledNorWaitedFor() throws Exception {
    // sh's background child exits at once; sh then becomes sleep, which never collects it.
    Process parent = new ProcessBuilder("sh", "-c", "sleep 0 & exec sleep 60").start();
    try {
      ProcessHandle zombie = awaitZombieChild(parent);
      assertTrue(zombie.isAlive(), "ProcessHandle counts a zombie alive");
      assertFalse(ProcessTree.running(zombie));
      assertEquals(0, ProcessTree.kill(null, List.of(zombie), null, 60_000), "a zombie signalled");
      assertTrue(ProcessTree.running(parent.toHandle()), "a process that runs is running");
    } finally {
      parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aRunningProcessIsSignalledAndGone() throws Exception {
    Process p = new ProcessBuilder("sleep", "60").start();
    assertEquals(1, ProcessTree.kill(null, List.of(p.toHandle()), null, 10_000));
    assertTrue(p.waitFor(10, TimeUnit.SECONDS), "still running after TERM and KILL");
    assertFalse(ProcessTree.running(p.toHandle()));
  }

  private static ProcessHandle awaitZombieChild(Process parent) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      Optional<ProcessHandle> z = parent.children().filter(c -> !ProcessTree.running(c)).findFirst();
      if (z.isPresent()) {
        return z.get();
      }
      Thread.sleep(10);
    }
    throw new AssertionError("sh's exited child did not show as a zombie of " + parent.pid());
  }
}
