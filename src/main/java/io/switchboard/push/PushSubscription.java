package io.switchboard.push;

import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.spec.ECFieldFp;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import java.util.Set;

/**
 * Where and how to push to one browser: the push service's endpoint (a capability URL: whoever
 * knows it can send to the device, so it is never logged in full) and the browser's P-256 key and
 * auth secret (RFC 8291). Made once from the page's {@code PushSubscription.toJSON()}.
 */
public record PushSubscription(String endpoint, String p256dh, String auth) {
  static final int MAX_ENDPOINT_CHARS = 2048;
  /** Plain http is allowed only to these hosts: the tests' loopback push service. */
  private static final Set<String> LOOPBACK = Set.of("localhost", "127.0.0.1", "[::1]");
  private static final ECParameterSpec P256 = p256();

  /** Checks the fields, so a bad subscription fails here, at the edge, and not at the first send. */
  public PushSubscription {
    checkEndpoint(endpoint);
    checkP256dh(p256dh);
    checkAuth(auth);
  }

  /** Reads the browser's {@code {endpoint, expirationTime?, keys: {p256dh, auth}}}. */
  public static PushSubscription parse(JsonObject json) {
    if (json == null) {
      throw new IllegalArgumentException("subscription must be a JSON object");
    }
    Object keys = json.getValue("keys");
    if (!(keys instanceof JsonObject k)) {
      throw new IllegalArgumentException("subscription.keys must be an object with p256dh and auth");
    }
    return new PushSubscription(text(json, "endpoint", "subscription.endpoint"),
        text(k, "p256dh", "subscription.keys.p256dh"), text(k, "auth", "subscription.keys.auth"));
  }

  /** The same shape as the browser's, without {@code expirationTime} (push services rarely set it). */
  public JsonObject toJson() {
    return new JsonObject().put("endpoint", endpoint)
        .put("keys", new JsonObject().put("p256dh", p256dh).put("auth", auth));
  }

  /** The push service an endpoint belongs to ({@code scheme://host[:port]}): holds and order are kept per service. */
  public static String origin(String endpoint) {
    try {
      URI uri = new URI(endpoint);
      return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort());
    } catch (URISyntaxException | RuntimeException e) {
      return endpoint;
    }
  }

  /** The endpoint's host: all of it a log line may show. */
  public String host() {
    return URI.create(endpoint).getHost();
  }

  byte[] p256dhBytes() {
    return Base64.getUrlDecoder().decode(p256dh);
  }

  byte[] authBytes() {
    return Base64.getUrlDecoder().decode(auth);
  }

  /** Hides the endpoint's path and the keys: a record's default would print the capability URL. */
  @Override
  public String toString() {
    return "PushSubscription[" + host() + "]";
  }

  private static String text(JsonObject json, String key, String name) {
    Object value = json.getValue(key);
    if (!(value instanceof String s) || s.isEmpty()) {
      throw new IllegalArgumentException(name + " must be a non-empty string");
    }
    return s;
  }

  private static void checkEndpoint(String endpoint) {
    String name = "subscription.endpoint";
    if (endpoint == null || endpoint.length() > MAX_ENDPOINT_CHARS) {
      throw new IllegalArgumentException(name + " must be a URL of at most " + MAX_ENDPOINT_CHARS + " characters");
    }
    URI uri;
    try {
      uri = new URI(endpoint);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(name + " must be an absolute https:// URL (" + e.getReason() + ")");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    String host = uri.getHost();
    if (host == null || uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
      throw new IllegalArgumentException(name + " must be an absolute https:// URL with a host, no user or fragment");
    }
    boolean loopbackHttp = scheme.equals("http") && LOOPBACK.contains(host.toLowerCase(Locale.ROOT));
    if (!scheme.equals("https") && !loopbackHttp) {
      throw new IllegalArgumentException(name + " must be an https:// URL (http:// only to localhost), not " + scheme + "://");
    }
    if (!loopbackHttp) {
      // The subscriber chooses the endpoint: the gateway posts to no address of its own network.
      String h = host.toLowerCase(Locale.ROOT);
      if (h.startsWith("[") || h.matches("[0-9.]+") || h.matches("0x[0-9a-f.x]+")) {
        throw new IllegalArgumentException(name + " must name its push service by host name, not an IP address ("
            + host + ")");
      }
      if (!h.contains(".") || h.endsWith(".local") || h.endsWith(".localhost") || h.equals("localhost")
          || h.endsWith(".internal") || h.endsWith(".lan") || h.endsWith(".home.arpa") || h.endsWith(".intranet")) {
        throw new IllegalArgumentException(name + " must be a push service on the internet, not a local name ("
            + host + ")");
      }
    }
  }

  /** A 65-byte uncompressed point on P-256: an off-curve key could leak our ephemeral secret (RFC 8291 §7). */
  private static void checkP256dh(String p256dh) {
    byte[] point = decode(p256dh, "subscription.keys.p256dh");
    if (point.length != 65 || point[0] != 0x04) {
      throw new IllegalArgumentException("subscription.keys.p256dh must be a 65-byte uncompressed P-256 point"
          + " starting with 0x04, not " + point.length + " bytes");
    }
    BigInteger p = ((ECFieldFp) P256.getCurve().getField()).getP();
    BigInteger x = new BigInteger(1, Arrays.copyOfRange(point, 1, 33));
    BigInteger y = new BigInteger(1, Arrays.copyOfRange(point, 33, 65));
    BigInteger rhs = x.pow(3).add(P256.getCurve().getA().multiply(x)).add(P256.getCurve().getB()).mod(p);
    if (x.compareTo(p) >= 0 || y.compareTo(p) >= 0 || !y.multiply(y).mod(p).equals(rhs)) {
      throw new IllegalArgumentException("subscription.keys.p256dh must be a point on the P-256 curve");
    }
  }

  private static void checkAuth(String auth) {
    byte[] secret = decode(auth, "subscription.keys.auth");
    if (secret.length != 16) {
      throw new IllegalArgumentException("subscription.keys.auth must decode to 16 bytes, not " + secret.length);
    }
  }

  private static byte[] decode(String value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " must be a base64url string");
    }
    try {
      return Base64.getUrlDecoder().decode(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + " must be base64url (" + e.getMessage() + ")");
    }
  }

  private static ECParameterSpec p256() {
    try {
      AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
      params.init(new ECGenParameterSpec("secp256r1"));
      return params.getParameterSpec(ECParameterSpec.class);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK has no P-256 curve", e);
    }
  }
}
