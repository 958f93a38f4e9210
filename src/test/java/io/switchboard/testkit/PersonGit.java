package io.switchboard.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** git as the person runs it in their own repository, for the jar tests that set one up and check it. */
public final class PersonGit {
  private PersonGit() {}

  /** Runs git as the person would (their identity, no hardening); fails naming what git said. */
  public static String git(Path where, String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("git", "-c", "user.name=P", "-c", "user.email=p@x"));
    argv.addAll(List.of(args));
    Process p = new ProcessBuilder(argv).directory(where.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes()).strip();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    if (p.exitValue() != 0) {
      throw new AssertionError("git " + String.join(" ", args) + " failed (" + p.exitValue() + "): " + out);
    }
    return out;
  }
}
