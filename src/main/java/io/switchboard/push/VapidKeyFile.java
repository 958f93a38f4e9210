package io.switchboard.push;

import com.interaso.webpush.VapidKeys;
import io.switchboard.config.AccessToken;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.Set;

/**
 * The gateway's VAPID key pair ({@code <dataDir>/vapid.json}, mode 0600): made on the first start,
 * only read afterwards. Every device's push subscription is bound to its public key, so a damaged
 * file is an error to fix by hand, never silently replaced: a new key would orphan every device.
 */
public final class VapidKeyFile {
  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

  private VapidKeyFile() {}

  /** Reads the key pair from {@code file}, or makes one and writes it there if there is no file yet. */
  public static VapidKeys loadOrCreate(Path file) throws IOException {
    if (Files.exists(file)) {
      return load(file);
    }
    VapidKeys keys = VapidKeys.generate();
    try {
      create(file, keys);
      return keys;
    } catch (FileAlreadyExistsException raced) {
      return load(file); // another start made it first: its key is the one devices will get
    }
  }

  /**
   * The applicationServerKey a page passes to {@code pushManager.subscribe}: the 65-byte uncompressed
   * public point, base64url without padding.
   */
  public static String publicKeyBase64Url(VapidKeys keys) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(keys.getApplicationServerKey());
  }

  private static VapidKeys load(Path file) throws IOException {
    ownerOnly(file);
    Object parsed;
    try {
      parsed = Json.decodeValue(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
    } catch (DecodeException e) {
      throw damaged(file, "is not JSON", e);
    }
    if (!(parsed instanceof JsonObject json)) {
      throw damaged(file, "is not a JSON object", null);
    }
    String publicKey = field(file, json, "publicKey");
    String privateKey = field(file, json, "privateKey");
    try {
      return VapidKeys.create(publicKey, privateKey);
    } catch (Exception e) { // the library (Kotlin) also throws checked key-spec exceptions undeclared
      throw damaged(file, "holds no usable P-256 key pair (" + e.getMessage() + ")", e);
    }
  }

  private static String field(Path file, JsonObject json, String name) throws IOException {
    Object value = json.getValue(name);
    if (!(value instanceof String text) || text.isBlank()) {
      throw damaged(file, "has no \"" + name + "\" string", null);
    }
    return text;
  }

  private static IOException damaged(Path file, String what, Exception cause) {
    return new IOException("the VAPID key file " + file + " " + what + "; restore it from a backup"
        + " (deleting it makes a new key, and every device must then subscribe again)", cause);
  }

  /** Writes a temporary owner-only file, then links it into place: readers never see a half-written key. */
  private static void create(Path file, VapidKeys keys) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    AccessToken.ensurePrivateDirectory(dir);
    Path temp;
    try {
      temp = Files.createTempFile(dir, ".vapid", ".tmp", PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    } catch (UnsupportedOperationException notPosix) {
      temp = Files.createTempFile(dir, ".vapid", ".tmp");
    }
    try {
      String json = new JsonObject()
          .put("publicKey", keys.getX509PublicKey())
          .put("privateKey", keys.getPkcs8PrivateKey())
          .encodePrettily();
      Files.writeString(temp, json + "\n", StandardCharsets.UTF_8);
      try {
        // A hard link is atomic and, unlike a rename, never replaces a file another start made.
        Files.createLink(file, temp);
      } catch (UnsupportedOperationException noLinks) {
        Files.move(temp, file);
      }
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  private static void ownerOnly(Path path) throws IOException {
    try {
      if (!Files.getPosixFilePermissions(path).equals(OWNER_ONLY)) {
        Files.setPosixFilePermissions(path, OWNER_ONLY);
      }
    } catch (UnsupportedOperationException notPosix) {
      // non-POSIX file systems keep their defaults
    }
  }
}
