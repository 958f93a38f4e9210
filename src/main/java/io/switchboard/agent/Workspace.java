package io.switchboard.agent;

import io.switchboard.jsonrpc.JsonRpcError;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A thread's working directory, and the only place its agent may read and write through
 * {@code fs/*} or run {@code terminal/*} commands. A path with a {@code ..} segment, an absolute
 * path elsewhere, or a symbolic link that leads out is refused with an error naming the path.
 * The methods here block: call them on a worker thread.
 */
final class Workspace {
  /** Files larger than this are not sent to an agent in one response. */
  static final long MAX_READ_BYTES = 16L * 1024 * 1024;

  private final Path root;

  Workspace(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  Path root() {
    return root;
  }

  /** Creates the directory if needed; returns its real path. */
  Path create() throws IOException {
    Files.createDirectories(root);
    return root.toRealPath();
  }

  /** Resolves a path an agent gave into one inside the workspace, or refuses it. */
  Path resolve(Object given) {
    if (!(given instanceof String text) || text.isEmpty()) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path must be a non-empty string");
    }
    Path raw = Path.of(text);
    for (Path segment : raw) {
      if (segment.toString().equals("..")) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path " + text + " contains '..'; use a path inside "
            + root);
      }
    }
    Path path = (raw.isAbsolute() ? raw : root.resolve(raw)).normalize();
    Path realRoot;
    try {
      realRoot = create();
    } catch (IOException e) {
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "the workspace " + root + " cannot be created: "
          + e.getMessage());
    }
    // The workspace may itself sit behind a symlink, so an agent may name either form of it.
    if (!path.startsWith(root) && !path.startsWith(realRoot)) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path " + text + " is outside the workspace " + root);
    }
    Path existing = path;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    Path real;
    try {
      real = existing.toRealPath().resolve(existing.relativize(path)).normalize();
    } catch (IOException e) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path " + text
          + " goes through a symbolic link that leads nowhere");
    }
    if (!real.startsWith(realRoot)) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path " + text + " leads outside the workspace " + root
          + " through a symbolic link");
    }
    return real;
  }

  /** {@code fs/read_text_file}: the whole file, or {@code limit} lines from 1-based {@code line}. */
  String read(Object path, Integer line, Integer limit) {
    Path file = resolve(path);
    try {
      if (Files.size(file) > MAX_READ_BYTES) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "file " + path + " is larger than "
            + (MAX_READ_BYTES >> 20) + " MiB");
      }
      String content = Files.readString(file, StandardCharsets.UTF_8);
      if (line == null && limit == null) {
        return content;
      }
      List<String> lines = new ArrayList<>(List.of(content.split("\n", -1)));
      int from = Math.max(0, (line == null ? 1 : line) - 1);
      int to = limit == null ? lines.size() : Math.min(lines.size(), from + Math.max(0, limit));
      return from >= lines.size() ? "" : String.join("\n", lines.subList(from, to));
    } catch (NoSuchFileException e) {
      throw new JsonRpcError(JsonRpcError.RESOURCE_NOT_FOUND, "Resource not found: " + path, path);
    } catch (java.nio.charset.MalformedInputException e) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "file " + path + " is not UTF-8 text");
    } catch (IOException e) {
      if (Files.isDirectory(file)) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, path + " is a directory");
      }
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "cannot read " + path + ": " + e.getMessage());
    }
  }

  /** {@code fs/write_text_file}: creates missing parent folders, replaces the file. */
  void write(Object path, Object content) {
    if (!(content instanceof String text)) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "content must be a string");
    }
    Path file = resolve(path);
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "cannot write " + path + ": " + e.getMessage());
    }
  }
}
