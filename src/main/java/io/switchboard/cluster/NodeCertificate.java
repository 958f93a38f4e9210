package io.switchboard.cluster;

import io.vertx.core.http.ClientAuth;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * This node's key and certificate and the cluster's authority, from the node's TLS folder ({@code
 * ca.crt}, {@code node.crt}, {@code node.key}, as {@code switchboard cluster cert} writes them):
 * checked before the node joins, then used for mutual TLS on the event bus. Trust is the cluster's
 * authority alone, every link shows a certificate both ways, and a node's certificate names it (the
 * subject's CN) and its address (a subject alternative name): a node does not start with another's
 * certificate, nor at an address its certificate does not name (docs/operations.md, "Cluster").
 * Plain JDK: the cluster libraries are needed to make certificates, not to use them.
 */
public record NodeCertificate(Path dir, X509Certificate authority, X509Certificate certificate) {
  public static final String AUTHORITY = "ca.crt";
  public static final String CERTIFICATE = "node.crt";
  public static final String KEY = "node.key";

  /**
   * Reads and checks the folder for the node {@code node} at {@code host}; an {@link
   * IllegalStateException} says what is missing or wrong and how to make it right.
   */
  public static NodeCertificate load(Path dir, String node, String host, Instant now) {
    for (String file : List.of(AUTHORITY, CERTIFICATE, KEY)) {
      if (!Files.isRegularFile(dir.resolve(file))) {
        throw new IllegalStateException("cluster mode needs this node's certificate: " + dir.resolve(file)
            + " is missing (make them with `switchboard cluster cert --name " + node + " --address " + host
            + "` where the cluster's authority is kept, and copy the folder it writes to " + dir + ")");
      }
    }
    if (Files.exists(dir.resolve(ClusterAuthority.AUTHORITY_KEY))) {
      throw new IllegalStateException(dir.resolve(ClusterAuthority.AUTHORITY_KEY) + " is the cluster authority's key: "
          + "it makes members and belongs on the machine that issues certificates, never on a node; move it away");
    }
    X509Certificate authority = authority(dir.resolve(AUTHORITY));
    X509Certificate certificate = read(dir.resolve(CERTIFICATE));
    try {
      certificate.verify(authority.getPublicKey());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(dir.resolve(CERTIFICATE) + " was not issued by the authority in "
          + dir.resolve(AUTHORITY) + " (" + authority.getSubjectX500Principal().getName() + "): every node's "
          + "certificate comes from the cluster's one authority");
    }
    for (X509Certificate c : List.of(authority, certificate)) {
      if (now.isBefore(c.getNotBefore().toInstant()) || now.isAfter(c.getNotAfter().toInstant())) {
        throw new IllegalStateException((c == authority ? dir.resolve(AUTHORITY) : dir.resolve(CERTIFICATE))
            + " is valid from " + c.getNotBefore().toInstant() + " to " + c.getNotAfter().toInstant()
            + ", not now (" + now + "): issue a new one (docs/operations.md, \"Renewing certificates\")");
      }
    }
    String named = commonName(certificate);
    if (!node.equals(named)) {
      throw new IllegalStateException(dir.resolve(CERTIFICATE) + " is node \"" + named + "\"'s certificate, not \""
          + node + "\"'s (cluster.node): a node starts only with a certificate issued for its own name");
    }
    if (!names(certificate, host)) {
      throw new IllegalStateException(dir.resolve(CERTIFICATE) + " names the address(es) " + addresses(certificate)
          + ", not " + host + " (cluster.host): issue the node a certificate for the address it listens on");
    }
    provePossession(dir.resolve(KEY), certificate);
    return new NodeCertificate(dir, authority, certificate);
  }

  /** How long until this node's certificate ends (for the start-up log's renewal warning). */
  public Duration left(Instant now) {
    return Duration.between(now, certificate.getNotAfter().toInstant());
  }

  /**
   * TLS on the clustered event bus: this node's key, the cluster's authority alone, a certificate
   * required both ways. Files, not objects: Vert.x copies these options to its bus client and server
   * through JSON, which carries only the file-backed kinds (a wrapped trust manager is dropped).
   * Vert.x's bus client verifies no host name, so a member's address is checked at its own start.
   */
  public void secure(EventBusOptions options) {
    options.setSsl(true)
        .setKeyCertOptions(new PemKeyCertOptions().setKeyPath(dir.resolve(KEY).toString())
            .setCertPath(dir.resolve(CERTIFICATE).toString()))
        .setTrustOptions(new PemTrustOptions().addCertPath(dir.resolve(AUTHORITY).toString()))
        .setClientAuth(ClientAuth.REQUIRED);
  }

  /**
   * The cluster's authority: exactly one certificate, a CA's, signed by itself. Every certificate in
   * the file would be trusted by the bus, so a second one appended is refused, not silently trusted.
   */
  static X509Certificate authority(Path file) {
    java.util.Collection<? extends java.security.cert.Certificate> all;
    try {
      all = CertificateFactory.getInstance("X.509").generateCertificates(
          new ByteArrayInputStream(Files.readAllBytes(file)));
    } catch (IOException | CertificateException e) {
      throw new IllegalStateException(file + " is not a PEM certificate: " + e.getMessage());
    }
    if (all.size() != 1 || !(all.iterator().next() instanceof X509Certificate ca)) {
      throw new IllegalStateException(file + " holds " + all.size() + " certificates: it must hold the cluster's "
          + "authority alone (each one in it would be trusted)");
    }
    try {
      ca.verify(ca.getPublicKey());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(file + " is not a self-signed authority certificate");
    }
    if (ca.getBasicConstraints() < 0) {
      throw new IllegalStateException(file + " is not a certificate authority's (no CA basic constraint)");
    }
    return ca;
  }

  static X509Certificate read(Path file) {
    try {
      return (X509Certificate) CertificateFactory.getInstance("X.509")
          .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(file)));
    } catch (IOException | CertificateException | ClassCastException e) {
      throw new IllegalStateException(file + " is not a PEM certificate: " + e.getMessage());
    }
  }

  /** The subject's common name: the node's name in a node certificate. */
  static String commonName(X509Certificate certificate) {
    try {
      for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          return rdn.getValue().toString();
        }
      }
    } catch (javax.naming.InvalidNameException e) {
      return null;
    }
    return null;
  }

  /** The certificate's subject alternative names of kind DNS (2) and IP (7). */
  static List<String> addresses(X509Certificate certificate) {
    List<String> out = new ArrayList<>();
    try {
      Collection<List<?>> names = certificate.getSubjectAlternativeNames();
      if (names != null) {
        for (List<?> name : names) {
          int kind = (Integer) name.get(0);
          if (kind == 2 || kind == 7) {
            out.add(name.get(1).toString());
          }
        }
      }
    } catch (CertificateException e) {
      return out;
    }
    return out;
  }

  /** Whether the certificate names the address (an IP compared as an address, a host name case-blind). */
  static boolean names(X509Certificate certificate, String host) {
    String bare = unbracketed(host);
    for (String address : addresses(certificate)) {
      if (address.equalsIgnoreCase(bare) || sameIp(address, bare)) {
        return true;
      }
    }
    return false;
  }

  private static boolean sameIp(String a, String b) {
    if (!looksLikeIp(a) || !looksLikeIp(b)) {
      return false;
    }
    try {
      return InetAddress.getByName(a).equals(InetAddress.getByName(b)); // literals: no name lookup
    } catch (IOException e) {
      return false;
    }
  }

  /** An IPv6 literal as a member list writes it ({@code [fd00::5]}) without its brackets. */
  public static String unbracketed(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  /** Whether an address is an IP literal (compared as an address, never looked up), not a host name. */
  static boolean looksLikeIp(String s) {
    return s.contains(":") || s.matches("[0-9.]+");
  }

  /** A PKCS #8 PEM private key of {@code algorithm} (EC for the keys {@link ClusterAuthority} makes). */
  static PrivateKey privateKey(String pem, String algorithm) throws GeneralSecurityException {
    byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
  }

  /** The key must be the certificate's: signs a nonce with one and checks it with the other. */
  private static void provePossession(Path keyFile, X509Certificate certificate) {
    try {
      String pem = Files.readString(keyFile);
      if (!pem.contains("-----BEGIN PRIVATE KEY-----")) {
        throw new IllegalStateException(keyFile + " is not a PKCS #8 PEM private key (\"BEGIN PRIVATE KEY\")");
      }
      String algorithm = certificate.getPublicKey().getAlgorithm();
      PrivateKey key = privateKey(pem, algorithm);
      String scheme = algorithm.equals("EC") ? "SHA256withECDSA" : "SHA256with" + algorithm;
      byte[] nonce = new byte[32];
      new java.security.SecureRandom().nextBytes(nonce);
      Signature sign = Signature.getInstance(scheme);
      sign.initSign(key);
      sign.update(nonce);
      Signature check = Signature.getInstance(scheme);
      check.initVerify(certificate.getPublicKey());
      check.update(nonce);
      if (!check.verify(sign.sign())) {
        throw new IllegalStateException(keyFile + " is not the key of " + keyFile.resolveSibling(CERTIFICATE));
      }
    } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalStateException(keyFile + " cannot be read as this node's private key: " + e.getMessage());
    }
  }
}
