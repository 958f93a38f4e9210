package io.switchboard.agent;

import io.switchboard.jsonrpc.JsonRpcError;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A thread's working directory, and the only place its agent may read and write through
 * {@code fs/*} or run {@code terminal/*} commands. A path with a {@code ..} segment, an absolute
 * path elsewhere, or a symbolic link that leads out is refused with an error naming the path.
 * Reads and writes open each folder from the root without following links, and touch only regular
 * files. The methods here block: call them on a worker thread.
 */
final class Workspace {
  /**
   * Files larger than this are not sent to an agent in one response ({@code Limits#fileReadBytes}):
   * a read is held several times over while encoded.
   */
  private final long maxReadBytes;

  private final Path root;
  /** A project's folder (a worktree, or the project's own): never made here, only used while it is there. */
  private final boolean given;

  Workspace(Path root, long maxReadBytes) {
    this(root, maxReadBytes, false);
  }

  Workspace(Path root, long maxReadBytes, boolean given) {
    this.maxReadBytes = maxReadBytes;
    this.root = root.toAbsolutePath().normalize();
    this.given = given;
  }

  Path root() {
    return root;
  }

  /**
   * Creates the directory if needed (a project's folder is never made: an empty one in its place
   * would have the agent work on nothing); returns its real path.
   */
  Path create() throws IOException {
    if (given) {
      if (!Files.isDirectory(root)) {
        throw new IOException("the folder of this thread, " + root + ", is gone (deleted by hand?); start a new "
            + "thread in its project");
      }
      return root.toRealPath();
    }
    Files.createDirectories(root);
    return root.toRealPath();
  }

  /** Resolves a path an agent gave into one inside the workspace, or refuses it. */
  Path resolve(Object given) {
    if (!(given instanceof String text) || text.isEmpty()) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path must be a non-empty string");
    }
    Path raw;
    try {
      raw = Path.of(text);
    } catch (java.nio.file.InvalidPathException e) {
      // A NUL or an unmappable character: the agent's mistake, not ours.
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path " + text.replace("\0", "\\0") + " is not a valid "
          + "path: " + e.getReason());
    }
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
    String content;
    try (SecureDirectoryStream<Path> dir = openParent(file, false)) {
      Path name = file.getFileName();
      BasicFileAttributes attributes = attributes(dir, name, path);
      if (attributes.isDirectory()) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, path + " is a directory");
      }
      if (!attributes.isRegularFile()) {
        // A named pipe would block the read for as long as nobody writes to it; a device never ends.
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, path + " is not a regular file");
      }
      try (SeekableByteChannel in = dir.newByteChannel(name, Set.of(StandardOpenOption.READ,
          LinkOption.NOFOLLOW_LINKS))) {
        content = decode(readAtMost(in, path), path);
      }
    } catch (NoSuchFileException e) {
      throw new JsonRpcError(JsonRpcError.RESOURCE_NOT_FOUND, "Resource not found: " + path, path);
    } catch (IOException e) {
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "cannot read " + path + ": " + e.getMessage());
    }
    if (line == null && limit == null) {
      return content;
    }
    List<String> lines = new ArrayList<>(List.of(content.split("\n", -1)));
    int from = Math.max(0, (line == null ? 1 : line) - 1);
    int to = limit == null ? lines.size() : Math.min(lines.size(), from + Math.max(0, limit));
    return from >= lines.size() ? "" : String.join("\n", lines.subList(from, to));
  }

  /** Reads the whole channel, refusing more than {@link #maxReadBytes} (whatever the size said). */
  private byte[] readAtMost(SeekableByteChannel in, Object path) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(in.size(), maxReadBytes) + 1);
    ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    while (in.read(buffer) >= 0) {
      if (out.size() + buffer.position() > maxReadBytes) {
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "file " + path + " is larger than "
            + (maxReadBytes >> 10) + " KiB, the most this gateway reads at once (it is sized from the heap); "
            + "read it in parts with line and limit");
      }
      out.write(buffer.array(), 0, buffer.position());
      buffer.clear();
    }
    return out.toByteArray();
  }

  private static String decode(byte[] bytes, Object path) {
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "file " + path + " is not UTF-8 text");
    }
  }

  /** {@code fs/write_text_file}: creates missing parent folders, replaces the file. */
  void write(Object path, Object content) {
    if (!(content instanceof String text)) {
      throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "content must be a string");
    }
    Path file = resolve(path);
    try (SecureDirectoryStream<Path> dir = openParent(file, true)) {
      Path name = file.getFileName();
      try {
        if (!attributes(dir, name, path).isRegularFile()) {
          throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, path + " exists and is not a regular file");
        }
      } catch (JsonRpcError missing) {
        if (missing.code() != JsonRpcError.RESOURCE_NOT_FOUND) {
          throw missing;
        }
      }
      try (SeekableByteChannel out = dir.newByteChannel(name, Set.of(StandardOpenOption.WRITE,
          StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS))) {
        ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
          out.write(bytes);
        }
      }
    } catch (IOException e) {
      throw new JsonRpcError(JsonRpcError.INTERNAL_ERROR, "cannot write " + path + ": " + e.getMessage());
    }
  }

  private static BasicFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name, Object path)
      throws IOException {
    try {
      return dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
    } catch (NoSuchFileException e) {
      throw new JsonRpcError(JsonRpcError.RESOURCE_NOT_FOUND, "Resource not found: " + path, path);
    }
  }

  /**
   * Opens the folder that holds {@code file} (a real path inside the workspace) one component at a
   * time from the workspace root, never following a link, so that a folder swapped for a symbolic
   * link after {@link #resolve} cannot take the call outside: the check and the use are the same
   * open file descriptors. {@code create} makes missing folders first.
   */
  private SecureDirectoryStream<Path> openParent(Path file, boolean create) throws IOException {
    Path realRoot = create();
    Path relative = realRoot.relativize(file.getParent() == null ? realRoot : file.getParent());
    if (create && !relative.toString().isEmpty()) {
      Files.createDirectories(realRoot.resolve(relative));
    }
    DirectoryStream<Path> rootStream = Files.newDirectoryStream(realRoot);
    if (!(rootStream instanceof SecureDirectoryStream<Path> dir)) {
      rootStream.close();
      throw new IOException("this platform cannot open folders without following links");
    }
    for (Path component : relative) {
      if (component.toString().isEmpty()) {
        continue;
      }
      SecureDirectoryStream<Path> next;
      try {
        next = dir.newDirectoryStream(component, LinkOption.NOFOLLOW_LINKS);
      } catch (IOException e) {
        dir.close();
        throw new JsonRpcError(JsonRpcError.INVALID_PARAMS, "path " + file + " goes through " + component
            + ", which is not a folder inside the workspace (" + e.getMessage() + ")");
      }
      dir.close();
      dir = next;
    }
    return dir;
  }
}
