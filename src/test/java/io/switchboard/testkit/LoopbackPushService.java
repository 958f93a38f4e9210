package io.switchboard.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A Web Push service on 127.0.0.1, written from the RFCs with the JDK's crypto only (no code of the
 * library under test), so a test can see what a real push service would: it checks the VAPID
 * header (RFC 8292), decrypts the body (RFC 8291 / RFC 8188) with a subscriber's private key, records
 * each message, and answers as the test scripted: a status (201 unless told otherwise), a status
 * after a delay, no answer at all ({@code hang}) or a connection closed without one ({@code drop}).
 */
public final class LoopbackPushService implements AutoCloseable {
  private static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder UNB64URL = Base64.getUrlDecoder();
  private static final ECParameterSpec P256 = p256();

  /** {@link Received#answered} of a request the service never answered (held until it closes). */
  public static final int HUNG = -1;
  /** {@link Received#answered} of a request whose connection the service closed without an answer. */
  public static final int DROPPED = -2;

  /** One message the service took: its headers, the decrypted plaintext, and its answer ({@link #HUNG}, {@link #DROPPED}). */
  public record Received(String subscriberId, int answered, String ttl, String urgency, String topic, byte[] plaintext) {
    public String text() {
      return new String(plaintext, StandardCharsets.UTF_8);
    }
  }

  /** A request the service refused before its script ran: bad VAPID header, encoding or body. */
  public record Rejected(String subscriberId, int status, String why) {}

  /** One scripted answer: a status (or {@link #HUNG}, {@link #DROPPED}), an optional {@code Retry-After}, a delay. */
  record Answer(int status, String retryAfter, long delayMs) {}

  /** A browser's side of one subscription: its key pair, auth secret and scripted answers. */
  public final class Subscriber {
    public final String id;
    public final KeyPair keys;
    public final byte[] auth;
    private final Queue<Answer> script = new ConcurrentLinkedQueue<>();

    private Subscriber(String id, KeyPair keys, byte[] auth) {
      this.id = id;
      this.keys = keys;
      this.auth = auth;
    }

    public String endpoint() {
      return origin() + "/push/" + id;
    }

    /** What {@code PushSubscription.toJSON()} gives a page. */
    public JsonObject subscription() {
      return new JsonObject().put("endpoint", endpoint()).putNull("expirationTime")
          .put("keys", new JsonObject()
              .put("p256dh", B64URL.encodeToString(uncompressed((ECPublicKey) keys.getPublic())))
              .put("auth", B64URL.encodeToString(auth)));
    }

    /** Answers the next request with {@code status} (and a {@code Retry-After} when not null). */
    public Subscriber answer(int status, String retryAfter) {
      script.add(new Answer(status, retryAfter, 0));
      return this;
    }

    /** Takes the next request (it is recorded) and answers {@code status} only {@code delayMs} later. */
    public Subscriber answerAfter(long delayMs, int status) {
      script.add(new Answer(status, null, delayMs));
      return this;
    }

    /** Forgets the answers still scripted: the next requests get 201 at once. */
    public Subscriber unscripted() {
      script.clear();
      return this;
    }

    /** Takes the next request and never answers it: the connection stays open until the service closes. */
    public Subscriber hang() {
      script.add(new Answer(HUNG, null, 0));
      return this;
    }

    /** Takes the next request and closes its connection without an HTTP answer. */
    public Subscriber drop() {
      script.add(new Answer(DROPPED, null, 0));
      return this;
    }
  }

  private final HttpServer server;
  private final byte[] expectedVapidKey;
  private final Map<String, Subscriber> subscribers = new ConcurrentHashMap<>();
  private final List<Received> received = new ArrayList<>();
  private final List<Rejected> rejected = new ArrayList<>();
  private final AtomicInteger requests = new AtomicInteger();
  private final SecureRandom random = new SecureRandom();
  /** Handlers run here, not on the server's one dispatcher thread: a delayed answer must not hold the others. */
  private final ExecutorService handlers = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "loopback-push");
    t.setDaemon(true);
    return t;
  });
  /** The requests it hangs on, closed with the service. */
  private final Queue<HttpExchange> hanging = new ConcurrentLinkedQueue<>();

  /**
   * Starts the service on an ephemeral port.
   *
   * @param expectedVapidKey the application server's 65-byte public key every request must carry
   *     in {@code k=} (as a real service holds the key a subscription was made with); null takes any
   */
  public static LoopbackPushService start(byte[] expectedVapidKey) throws IOException {
    return new LoopbackPushService(expectedVapidKey);
  }

  private LoopbackPushService(byte[] expectedVapidKey) throws IOException {
    this.expectedVapidKey = expectedVapidKey == null ? null : expectedVapidKey.clone();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.createContext("/push/", this::handle);
    server.setExecutor(handlers);
    server.start();
  }

  /** {@code http://127.0.0.1:<port>}: the VAPID audience every request must name. */
  public String origin() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** A new subscription with a fresh P-256 key pair and a 16-byte auth secret. */
  public Subscriber newSubscriber() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      byte[] auth = new byte[16];
      random.nextBytes(auth);
      byte[] id = new byte[12];
      random.nextBytes(id);
      Subscriber s = new Subscriber(B64URL.encodeToString(id), generator.generateKeyPair(), auth);
      subscribers.put(s.id, s);
      return s;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Every POST that reached the service, accepted or not. */
  public int requests() {
    return requests.get();
  }

  public synchronized List<Received> received() {
    return List.copyOf(received);
  }

  public synchronized List<Rejected> rejected() {
    return List.copyOf(rejected);
  }

  /** Waits until {@code count} messages were taken; they are recorded before the answer is sent. */
  public synchronized List<Received> awaitReceived(int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (received.size() < count) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new AssertionError("expected " + count + " push messages, got " + received + ", rejected " + rejected);
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return List.copyOf(received);
  }

  @Override
  public void close() {
    server.stop(0);
    for (HttpExchange e; (e = hanging.poll()) != null; ) {
      e.close();
    }
    handlers.shutdownNow(); // a delayed answer still sleeping is cut: the connection is gone anyway
  }

  private void handle(HttpExchange exchange) throws IOException {
    boolean hung = false;
    try {
      requests.incrementAndGet();
      String id = exchange.getRequestURI().getPath().substring("/push/".length());
      Subscriber s = subscribers.get(id);
      if (s == null || !exchange.getRequestMethod().equals("POST")) {
        respond(exchange, 404, null, "no such subscription");
        return;
      }
      byte[] body = exchange.getRequestBody().readAllBytes();
      String problem = vapidProblem(exchange.getRequestHeaders().getFirst("Authorization"), s);
      if (problem != null) {
        reject(exchange, s, problem.startsWith("k=") ? 403 : 401, problem);
        return;
      }
      if (!"aes128gcm".equals(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
        reject(exchange, s, 415, "Content-Encoding must be aes128gcm");
        return;
      }
      String ttl = exchange.getRequestHeaders().getFirst("TTL");
      if (ttl == null) {
        reject(exchange, s, 400, "no TTL header (RFC 8030 §5.2)");
        return;
      }
      byte[] plaintext;
      try {
        plaintext = decrypt(body, (ECPrivateKey) s.keys.getPrivate(), uncompressed((ECPublicKey) s.keys.getPublic()), s.auth);
      } catch (GeneralSecurityException | RuntimeException e) {
        reject(exchange, s, 400, "cannot decrypt: " + e);
        return;
      }
      Answer answer = s.script.poll();
      answer = answer == null ? new Answer(201, null, 0) : answer;
      synchronized (this) {
        received.add(new Received(id, answer.status(), ttl, exchange.getRequestHeaders().getFirst("Urgency"),
            exchange.getRequestHeaders().getFirst("Topic"), plaintext));
        notifyAll();
      }
      if (answer.status() == HUNG) {
        hanging.add(exchange);
        hung = true;
        return;
      }
      if (answer.status() == DROPPED) {
        return; // closing an exchange that sent no headers closes its connection: no HTTP answer at all
      }
      if (answer.delayMs() > 0) {
        try {
          Thread.sleep(answer.delayMs());
        } catch (InterruptedException closed) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      respond(exchange, answer.status(), answer.retryAfter(), answer.status() >= 300 ? "scripted " + answer.status() : "");
    } finally {
      if (!hung) {
        exchange.close();
      }
    }
  }

  private void reject(HttpExchange exchange, Subscriber s, int status, String why) throws IOException {
    synchronized (this) {
      rejected.add(new Rejected(s.id, status, why));
      notifyAll();
    }
    respond(exchange, status, null, why);
  }

  private static void respond(HttpExchange exchange, int status, String retryAfter, String text) throws IOException {
    if (retryAfter != null) {
      exchange.getResponseHeaders().add("Retry-After", retryAfter);
    }
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  /**
   * What is wrong with an {@code Authorization: vapid t=<JWT>, k=<key>} header (RFC 8292), or null:
   * an ES256 signature by {@code k}, {@code k} the expected key, {@code aud} this origin, {@code exp}
   * in the next 24 hours, a {@code sub}. A wrong key starts with "k=" (403); the rest are 401.
   */
  private String vapidProblem(String header, Subscriber s) {
    if (header == null || !header.regionMatches(true, 0, "vapid ", 0, 6)) {
      return "no vapid Authorization header";
    }
    Map<String, String> params = new HashMap<>();
    for (String part : header.substring(6).split(",")) {
      String[] kv = part.trim().split("=", 2);
      if (kv.length == 2) {
        params.put(kv[0].trim(), kv[1].trim());
      }
    }
    String token = params.get("t");
    String key = params.get("k");
    if (token == null || key == null) {
      return "the vapid header needs t= and k=";
    }
    try {
      byte[] k = UNB64URL.decode(key);
      if (expectedVapidKey != null && !Arrays.equals(k, expectedVapidKey)) {
        return "k= is not the application server key this subscription was made with";
      }
      String[] jwt = token.split("\\.");
      if (jwt.length != 3) {
        return "t= is not a JWT";
      }
      JsonObject head = new JsonObject(new String(UNB64URL.decode(jwt[0]), StandardCharsets.UTF_8));
      if (!"ES256".equals(head.getString("alg"))) {
        return "the JWT's alg is not ES256";
      }
      Signature verifier = Signature.getInstance("SHA256withECDSAinP1363Format");
      verifier.initVerify(publicKey(k));
      verifier.update((jwt[0] + "." + jwt[1]).getBytes(StandardCharsets.US_ASCII));
      if (!verifier.verify(UNB64URL.decode(jwt[2]))) {
        return "the JWT's signature does not verify with k=";
      }
      JsonObject claims = new JsonObject(new String(UNB64URL.decode(jwt[1]), StandardCharsets.UTF_8));
      long now = System.currentTimeMillis() / 1000;
      Long exp = claims.getLong("exp");
      if (!origin().equals(claims.getString("aud"))) {
        return "aud is " + claims.getString("aud") + ", not " + origin();
      }
      if (exp == null || exp <= now || exp > now + 24 * 3600) {
        return "exp " + exp + " is not within the next 24 hours (now " + now + ")";
      }
      String sub = claims.getString("sub");
      if (sub == null || sub.isEmpty()) {
        return "no sub claim";
      }
      return null;
    } catch (GeneralSecurityException | RuntimeException e) {
      return "unreadable vapid header: " + e;
    }
  }

  /** The RFC 8291 §3.4 key schedule, each step kept so a test can compare it to RFC 8291 Appendix A. */
  public record Derivation(byte[] ecdhSecret, byte[] prkKey, byte[] keyInfo, byte[] ikm, byte[] prk, byte[] cek, byte[] nonce) {}

  /** Derives the content key and nonce for a message from sender key {@code asPublic} and {@code salt}. */
  public static Derivation derive(ECPrivateKey uaPrivate, byte[] uaPublic, byte[] asPublic, byte[] authSecret, byte[] salt)
      throws GeneralSecurityException {
    KeyAgreement ecdh = KeyAgreement.getInstance("ECDH");
    ecdh.init(uaPrivate);
    ecdh.doPhase(publicKey(asPublic), true);
    byte[] ecdhSecret = ecdh.generateSecret();
    byte[] prkKey = hmac(authSecret, ecdhSecret);
    byte[] keyInfo = concat("WebPush: info\0".getBytes(StandardCharsets.US_ASCII), uaPublic, asPublic);
    byte[] ikm = expand(prkKey, keyInfo, 32);
    byte[] prk = hmac(salt, ikm);
    byte[] cek = expand(prk, "Content-Encoding: aes128gcm\0".getBytes(StandardCharsets.US_ASCII), 16);
    byte[] nonce = expand(prk, "Content-Encoding: nonce\0".getBytes(StandardCharsets.US_ASCII), 12);
    return new Derivation(ecdhSecret, prkKey, keyInfo, ikm, prk, cek, nonce);
  }

  /**
   * Opens an {@code aes128gcm} push message body (RFC 8188 header: salt(16) rs(4) idlen(1) keyid,
   * where keyid is the sender's 65-byte ephemeral key; one record) and strips its padding.
   */
  public static byte[] decrypt(byte[] body, ECPrivateKey uaPrivate, byte[] uaPublic, byte[] authSecret)
      throws GeneralSecurityException {
    ByteBuffer in = ByteBuffer.wrap(body);
    if (body.length < 21 + 65 + 17) {
      throw new GeneralSecurityException("body of " + body.length + " bytes is too short for aes128gcm");
    }
    byte[] salt = new byte[16];
    in.get(salt);
    long rs = Integer.toUnsignedLong(in.getInt());
    int idlen = Byte.toUnsignedInt(in.get());
    if (idlen != 65) {
      throw new GeneralSecurityException("keyid is " + idlen + " bytes, not the 65 of an uncompressed P-256 key");
    }
    byte[] asPublic = new byte[65];
    in.get(asPublic);
    byte[] ciphertext = new byte[in.remaining()];
    in.get(ciphertext);
    if (rs < 18 || ciphertext.length > rs) {
      throw new GeneralSecurityException("a push message is one record, but rs " + rs + " < " + ciphertext.length);
    }
    Derivation d = derive(uaPrivate, uaPublic, asPublic, authSecret, salt);
    Cipher aes = Cipher.getInstance("AES/GCM/NoPadding");
    aes.init(Cipher.DECRYPT_MODE, new SecretKeySpec(d.cek(), "AES"), new GCMParameterSpec(128, d.nonce()));
    byte[] padded = aes.doFinal(ciphertext);
    int end = padded.length - 1;
    while (end >= 0 && padded[end] == 0) {
      end--; // RFC 8188 §2: padding is zeros after the delimiter
    }
    if (end < 0 || padded[end] != 0x02) {
      throw new GeneralSecurityException("the last record's padding delimiter 0x02 is missing");
    }
    return Arrays.copyOf(padded, end);
  }

  /** A P-256 private key from its 32-byte scalar (as RFC 8291's example gives it). */
  public static ECPrivateKey privateKey(byte[] scalar) throws GeneralSecurityException {
    return (ECPrivateKey) KeyFactory.getInstance("EC").generatePrivate(new ECPrivateKeySpec(new BigInteger(1, scalar), P256));
  }

  /** A P-256 public key from its 65-byte uncompressed form (0x04 || x || y). */
  public static ECPublicKey publicKey(byte[] uncompressed) throws GeneralSecurityException {
    if (uncompressed.length != 65 || uncompressed[0] != 0x04) {
      throw new GeneralSecurityException("not a 65-byte uncompressed point");
    }
    ECPoint w = new ECPoint(new BigInteger(1, Arrays.copyOfRange(uncompressed, 1, 33)),
        new BigInteger(1, Arrays.copyOfRange(uncompressed, 33, 65)));
    return (ECPublicKey) KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(w, P256));
  }

  /** The 65-byte uncompressed form of a P-256 public key. */
  public static byte[] uncompressed(ECPublicKey key) {
    byte[] out = new byte[65];
    out[0] = 0x04;
    fixed32(key.getW().getAffineX(), out, 1);
    fixed32(key.getW().getAffineY(), out, 33);
    return out;
  }

  private static void fixed32(BigInteger n, byte[] out, int at) {
    byte[] b = n.toByteArray(); // big-endian, maybe with a sign byte or fewer than 32 bytes
    int len = Math.min(b.length, 32);
    System.arraycopy(b, b.length - len, out, at + 32 - len, len);
  }

  private static byte[] hmac(byte[] key, byte[] data) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(data);
  }

  /** HKDF-Expand for at most one block (all RFC 8291 needs): HMAC(prk, info || 0x01), truncated. */
  private static byte[] expand(byte[] prk, byte[] info, int length) throws GeneralSecurityException {
    return Arrays.copyOf(hmac(prk, concat(info, new byte[] {1})), length);
  }

  private static byte[] concat(byte[]... parts) {
    ByteBuffer out = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(p -> p.length).sum());
    for (byte[] p : parts) {
      out.put(p);
    }
    return out.array();
  }

  private static ECParameterSpec p256() {
    try {
      AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
      params.init(new ECGenParameterSpec("secp256r1"));
      return params.getParameterSpec(ECParameterSpec.class);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
