package io.switchboard.cluster;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The cluster's certificate authority: {@code switchboard cluster ca} makes it (its key 0600, kept on
 * the machine where it was run, never on a node), {@code switchboard cluster cert} issues a node its
 * key and certificate for its name and address, in the folder layout {@link NodeCertificate} reads.
 * ECDSA P-256 keys, SHA-256 signatures. Needs the cluster libraries (BouncyCastle) on the class path.
 */
public final class ClusterAuthority {
  public static final String AUTHORITY_KEY = "ca.key";
  static final Duration AUTHORITY_LIFE = Duration.ofDays(3650);
  public static final int DEFAULT_NODE_DAYS = 397;

  private ClusterAuthority() {}

  /** Makes the authority in {@code dir}: {@code ca.crt} and {@code ca.key}; refuses to replace one. */
  public static X509Certificate create(Path dir, Instant now) throws IOException, GeneralSecurityException {
    Path key = dir.resolve(AUTHORITY_KEY);
    Path cert = dir.resolve(NodeCertificate.AUTHORITY);
    if (Files.exists(key) && !Files.exists(cert)) {
      throw new FileAlreadyExistsException(key.toString(), null, "an unfinished authority: its key without "
          + NodeCertificate.AUTHORITY + " (an earlier `cluster ca` stopped half way; nothing can have been issued "
          + "from it); delete " + key + " and run the command again");
    }
    if (Files.exists(key) || Files.exists(cert)) {
      throw new FileAlreadyExistsException(dir.toString(), null, "a cluster authority is already there (" + cert
          + "); a new one would orphan every node certificate it issued");
    }
    KeyPair pair = newKeyPair();
    byte[] id = new byte[6];
    new SecureRandom().nextBytes(id);
    X500Name name = new X500NameBuilder(BCStyle.INSTANCE)
        .addRDN(BCStyle.CN, "Switchboard cluster authority " + java.util.HexFormat.of().formatHex(id)).build();
    X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serial(), Date.from(now.minusSeconds(60)),
        Date.from(now.plus(AUTHORITY_LIFE)), name, pair.getPublic());
    JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
        .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
        .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(pair.getPublic()));
    X509Certificate certificate = sign(builder, pair.getPrivate());
    Files.createDirectories(dir);
    writeSecret(key, pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
    writeWhole(cert, pem("CERTIFICATE", certificate.getEncoded()), false);
    return certificate;
  }

  /**
   * Issues node {@code name} at {@code address} its key and certificate, written with the authority's
   * certificate to {@code out} (the node's TLS folder); refuses to replace a key there.
   */
  public static X509Certificate issue(Path authorityDir, String name, String address, Path out, int days, Instant now)
      throws IOException, GeneralSecurityException {
    Path caKey = authorityDir.resolve(AUTHORITY_KEY);
    if (!Files.isRegularFile(caKey)) {
      throw new java.nio.file.NoSuchFileException(caKey.toString(), null,
          "no cluster authority there: make one with `switchboard cluster ca --dir " + authorityDir + "`");
    }
    X509Certificate authority = NodeCertificate.authority(authorityDir.resolve(NodeCertificate.AUTHORITY));
    PrivateKey authorityKey = readKey(caKey);
    if (Files.exists(out.resolve(AUTHORITY_KEY))) {
      throw new FileAlreadyExistsException(out.toString(), null, "it holds the authority's key: a node's folder is "
          + "copied to the node, and the key must never go with it; give another --out");
    }
    if (Files.exists(out.resolve(NodeCertificate.KEY))) {
      throw new FileAlreadyExistsException(out.resolve(NodeCertificate.KEY).toString(), null,
          "a node key is already there; give another --out, or move the old folder away first");
    }
    KeyPair pair = newKeyPair();
    X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, name).build();
    X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(authority, serial(),
        Date.from(now.minusSeconds(60)), Date.from(earlier(now.plus(Duration.ofDays(days)),
        authority.getNotAfter().toInstant())), subject, pair.getPublic());
    JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
        .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
        // Every link is a client one way and a server the other: both purposes.
        .addExtension(Extension.extendedKeyUsage, false,
            new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
        .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(generalName(address)))
        .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(authority))
        .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(pair.getPublic()));
    X509Certificate certificate = sign(builder, authorityKey);
    Files.createDirectories(out);
    // The key last: a run stopped before it leaves no key, so the next run goes ahead and replaces
    // the certificates (a folder with a key is one this command refuses to touch).
    Files.writeString(out.resolve(NodeCertificate.CERTIFICATE), pem("CERTIFICATE", certificate.getEncoded()));
    Files.writeString(out.resolve(NodeCertificate.AUTHORITY), pem("CERTIFICATE", authority.getEncoded()));
    writeSecret(out.resolve(NodeCertificate.KEY), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
    return certificate;
  }

  /** A node's certificate ends no later than its authority's (it could not be checked after). */
  private static Instant earlier(Instant a, Instant b) {
    return a.isBefore(b) ? a : b;
  }

  /** An address as a certificate names it: an IP literal as an IP, anything else as a DNS name. */
  private static GeneralName generalName(String address) throws IOException {
    String bare = NodeCertificate.unbracketed(address);
    if (NodeCertificate.looksLikeIp(bare)) {
      return new GeneralName(GeneralName.iPAddress, InetAddress.getByName(bare).getHostAddress());
    }
    return new GeneralName(GeneralName.dNSName, bare);
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    return generator.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(127, new SecureRandom()).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter().getCertificate(
          builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("cannot sign with the authority's key: " + e.getMessage(), e);
    }
  }

  private static PrivateKey readKey(Path file) throws IOException, GeneralSecurityException {
    return NodeCertificate.privateKey(Files.readString(file), "EC");
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  /** A key file: made 0600 before a byte of the key is in it, and whole or not there at all ({@link #writeWhole}). */
  private static void writeSecret(Path file, String text) throws IOException {
    writeWhole(file, text, true);
  }

  /**
   * Writes a file whole or not at all, never replacing one: under a temporary name, flushed to disk,
   * then linked to its own name (which fails if one is there); where the file system has no hard
   * links (FAT, some network mounts), moved there instead. The temporary file never outlives the call.
   */
  private static void writeWhole(Path file, String text, boolean secret) throws IOException {
    Path partial = file.resolveSibling(file.getFileName() + ".partial");
    Files.deleteIfExists(partial); // a stopped run's
    try {
      if (secret) {
        Files.createFile(partial, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      } else {
        Files.createFile(partial);
      }
      try (java.nio.channels.FileChannel out = java.nio.channels.FileChannel.open(partial, StandardOpenOption.WRITE)) {
        java.nio.ByteBuffer bytes = java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
          out.write(bytes);
        }
        out.force(true);
      }
      try {
        Files.createLink(file, partial);
      } catch (FileAlreadyExistsException e) {
        throw e;
      } catch (UnsupportedOperationException | java.nio.file.FileSystemException noHardLinks) {
        Files.move(partial, file); // without REPLACE_EXISTING: refuses a file that is there, as the link does
      }
    } finally {
      Files.deleteIfExists(partial);
    }
  }
}
