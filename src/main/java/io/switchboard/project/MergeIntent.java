package io.switchboard.project;

import io.switchboard.project.Git.GitException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A merge under way, written down before the base branch moves and removed after the person's
 * checkout caught up, so a gateway killed between the two finishes the merge at its next start.
 */
final class MergeIntent {
  record Pending(String base, String from, String to, boolean checkedOut) {}

  private final Path file;

  MergeIntent(Path projectWorktrees) {
    this.file = projectWorktrees.resolve(".merge-intent.json");
  }

  void write(String base, String from, String to, boolean checkedOut) throws GitException {
    try {
      Files.createDirectories(file.getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.writeString(tmp, new JsonObject().put("base", base).put("from", from).put("to", to)
          .put("checkedOut", checkedOut).encode());
      try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
        ch.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new GitException("cannot record the merge before making it (" + e.getMessage() + "); nothing was merged");
    }
  }

  Pending read() {
    try {
      if (!Files.isRegularFile(file)) {
        return null;
      }
      JsonObject j = new JsonObject(Files.readString(file));
      return new Pending(j.getString("base"), j.getString("from"), j.getString("to"), j.getBoolean("checkedOut"));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  void clear() {
    try {
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // read again at the next start: finishing it twice does nothing
    }
  }
}
