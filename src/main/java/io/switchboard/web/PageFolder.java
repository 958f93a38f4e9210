package io.switchboard.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The folder the chat page is served from: the build's copy of {@code webroot/} on the classpath
 * (index.html filtered, its import map naming the webjar versions), as an absolute path.
 *
 * <p>Not Vert.x's {@code StaticHandler.create("webroot")}: that looks for {@code ./webroot} in the
 * working directory first and on the classpath only after, and in a checkout {@code ./webroot} is
 * the page's source, whose index.html the build has not filtered (its import map names
 * {@code ${marked.version}}). {@code java -jar target/switchboard.jar} run from the checkout, and
 * every test, would serve that. From a folder on the classpath ({@code target/classes}, an IDE) the
 * page is served where it is; from the jar, its files are first unpacked into a new folder in the
 * gateway's own temporary folder (where Vert.x would have cached them; cleared at the next start).
 */
final class PageFolder {
  /** The page's folder on the classpath, as the build lays it out (pom.xml's resources). */
  static final String ON_CLASSPATH = "webroot";

  private PageFolder() {
  }

  /** Blocking: the absolute folder holding index.html and the rest of the page. */
  static Path locate(Path tempDir) {
    String index = ON_CLASSPATH + "/index.html";
    URL url = PageFolder.class.getClassLoader().getResource(index);
    if (url == null) {
      throw new IllegalStateException("the page (" + index + ") is not on the classpath");
    }
    try {
      return switch (url.getProtocol()) {
        case "file" -> Path.of(url.toURI()).getParent();
        case "jar" -> unpack((JarURLConnection) url.openConnection(), tempDir);
        default -> throw new IllegalStateException("cannot serve the page from " + url);
      };
    } catch (IOException e) {
      throw new UncheckedIOException("cannot unpack the page from " + url + ": " + e.getMessage(), e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot serve the page from " + url, e);
    }
  }

  private static Path unpack(JarURLConnection connection, Path tempDir) throws IOException {
    Files.createDirectories(tempDir);
    Path folder = Files.createTempDirectory(tempDir, "webroot-").toAbsolutePath();
    String prefix = ON_CLASSPATH + "/";
    connection.setUseCaches(false);
    try (JarFile jar = connection.getJarFile()) {
      Enumeration<JarEntry> entries = jar.entries();
      while (entries.hasMoreElements()) {
        JarEntry entry = entries.nextElement();
        if (entry.isDirectory() || !entry.getName().startsWith(prefix)) {
          continue;
        }
        Path file = folder.resolve(entry.getName().substring(prefix.length())).normalize();
        if (!file.startsWith(folder)) {
          throw new IOException("entry outside the page's folder: " + entry.getName());
        }
        Files.createDirectories(file.getParent());
        try (InputStream in = jar.getInputStream(entry)) {
          Files.copy(in, file);
        }
      }
    }
    return folder;
  }
}
