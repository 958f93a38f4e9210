package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster's authority and its nodes' certificates: made by the gateway, checked before a node joins. */
class NodeCertificateTest {
  private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");

  @TempDir
  Path dir;

  @Test
  void aNodeStartsWithTheCertificateIssuedForItsNameAndAddress() throws Exception {
    X509Certificate ca = ClusterAuthority.create(dir.resolve("ca"), NOW);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
        dir.resolve("ca").resolve(ClusterAuthority.AUTHORITY_KEY))));
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
        dir.resolve("build-1").resolve(NodeCertificate.KEY))));
    NodeCertificate node = NodeCertificate.load(dir.resolve("build-1"), "build-1", "10.0.0.6", NOW);
    assertEquals(ca, node.authority());
    assertEquals("build-1", NodeCertificate.commonName(node.certificate()));
    assertEquals(List.of("10.0.0.6"), NodeCertificate.addresses(node.certificate()));
    assertTrue(node.left(NOW).compareTo(Duration.ofDays(29)) > 0 && node.left(NOW).compareTo(Duration.ofDays(31)) < 0);
    // A host name and an IPv6 address, written as a member would be.
    ClusterAuthority.issue(dir.resolve("ca"), "edge", "edge.lan", dir.resolve("edge"), 30, NOW);
    NodeCertificate.load(dir.resolve("edge"), "edge", "EDGE.lan", NOW);
    ClusterAuthority.issue(dir.resolve("ca"), "v6", "[fd00::5]", dir.resolve("v6"), 30, NOW);
    NodeCertificate.load(dir.resolve("v6"), "v6", "fd00:0:0::5", NOW);
  }

  @Test
  void anotherNodesCertificateIsRefusedNamingWhose() throws Exception {
    ClusterAuthority.create(dir.resolve("ca"), NOW);
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW);
    String name = refused(dir.resolve("build-1"), "build-2", "10.0.0.6", NOW);
    assertTrue(name.contains("node \"build-1\"'s certificate, not \"build-2\"'s"), name);
    String address = refused(dir.resolve("build-1"), "build-1", "10.0.0.7", NOW);
    assertTrue(address.contains("names the address(es) [10.0.0.6], not 10.0.0.7"), address);
  }

  @Test
  void aCertificateOfAnotherAuthorityOrOutOfDateIsRefused() throws Exception {
    ClusterAuthority.create(dir.resolve("ca"), NOW);
    ClusterAuthority.create(dir.resolve("other"), NOW);
    ClusterAuthority.issue(dir.resolve("other"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW);
    Files.copy(dir.resolve("ca").resolve(NodeCertificate.AUTHORITY), dir.resolve("build-1").resolve(NodeCertificate.AUTHORITY),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertTrue(refused(dir.resolve("build-1"), "build-1", "10.0.0.6", NOW).contains("was not issued by the authority"));

    ClusterAuthority.issue(dir.resolve("ca"), "build-2", "10.0.0.7", dir.resolve("build-2"), 30, NOW);
    String late = refused(dir.resolve("build-2"), "build-2", "10.0.0.7", NOW.plus(Duration.ofDays(31)));
    assertTrue(late.contains("node.crt is valid from") && late.contains("not now"), late);
  }

  @Test
  void aMissingFileOrAKeyOfAnotherNodeIsNamed() throws Exception {
    ClusterAuthority.create(dir.resolve("ca"), NOW);
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW);
    ClusterAuthority.issue(dir.resolve("ca"), "build-2", "10.0.0.7", dir.resolve("build-2"), 30, NOW);
    Files.copy(dir.resolve("build-2").resolve(NodeCertificate.KEY), dir.resolve("build-1").resolve(NodeCertificate.KEY),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertTrue(refused(dir.resolve("build-1"), "build-1", "10.0.0.6", NOW).contains("is not the key of"));
    Files.delete(dir.resolve("build-2").resolve(NodeCertificate.AUTHORITY));
    String missing = refused(dir.resolve("build-2"), "build-2", "10.0.0.7", NOW);
    assertTrue(missing.contains("ca.crt is missing") && missing.contains("cluster cert --name build-2 --address 10.0.0.7"),
        missing);
  }

  @Test
  void nothingIsReplaced() throws Exception {
    ClusterAuthority.create(dir.resolve("ca"), NOW);
    byte[] key = Files.readAllBytes(dir.resolve("ca").resolve(ClusterAuthority.AUTHORITY_KEY));
    assertThrows(FileAlreadyExistsException.class, () -> ClusterAuthority.create(dir.resolve("ca"), NOW));
    assertTrue(java.util.Arrays.equals(key, Files.readAllBytes(dir.resolve("ca").resolve(ClusterAuthority.AUTHORITY_KEY))));
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW);
    assertThrows(FileAlreadyExistsException.class,
        () -> ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW));
    assertThrows(java.nio.file.NoSuchFileException.class,
        () -> ClusterAuthority.issue(dir.resolve("none"), "build-1", "10.0.0.6", dir.resolve("x"), 30, NOW));
  }

  /** What a `cluster ca` or `cluster cert` stopped half way (a crash, ^C) leaves is said or finished by the next run. */
  @Test
  void aRunStoppedHalfWayIsFinishedOrNamedByTheNext() throws Exception {
    ClusterAuthority.create(dir.resolve("ca"), NOW);
    // cert: the certificates written, the key not yet linked in (its temporary file half written).
    Path out = Files.createDirectories(dir.resolve("build-1"));
    Files.writeString(out.resolve(NodeCertificate.CERTIFICATE), "-----BEGIN CERTIFICATE-----\ncut");
    Files.writeString(out.resolve(NodeCertificate.AUTHORITY), "-----BEGIN CERTIFICATE-----\ncut");
    Files.writeString(out.resolve(NodeCertificate.KEY + ".partial"), "-----BEGIN PRIVATE KEY-----\ncut");
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", out, 30, NOW);
    NodeCertificate.load(out, "build-1", "10.0.0.6", NOW);
    assertEquals(List.of("ca.crt", "node.crt", "node.key"), names(out));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
        out.resolve(NodeCertificate.KEY))));
    // ca: the key there and not its certificate: said what to do, nothing touched.
    Path half = Files.createDirectories(dir.resolve("half"));
    Files.writeString(half.resolve(ClusterAuthority.AUTHORITY_KEY), "key");
    FileAlreadyExistsException e = assertThrows(FileAlreadyExistsException.class,
        () -> ClusterAuthority.create(half, NOW));
    assertTrue(e.getMessage().contains("unfinished authority") && e.getMessage().contains("delete "), e.getMessage());
    assertEquals("key", Files.readString(half.resolve(ClusterAuthority.AUTHORITY_KEY)));
    assertEquals(List.of(ClusterAuthority.AUTHORITY_KEY), names(half));
  }

  private static List<String> names(Path dir) throws Exception {
    try (var files = Files.list(dir)) {
      return files.map(f -> f.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void theAuthorityFileHoldsOneSelfSignedAuthorityAndItsKeyNeverGoesToANode() throws Exception {
    ClusterAuthority.create(dir.resolve("ca"), NOW);
    ClusterAuthority.create(dir.resolve("other"), NOW);
    ClusterAuthority.issue(dir.resolve("ca"), "build-1", "10.0.0.6", dir.resolve("build-1"), 30, NOW);
    Path ca = dir.resolve("build-1").resolve(NodeCertificate.AUTHORITY);
    String one = Files.readString(ca);
    Files.writeString(ca, one + Files.readString(dir.resolve("other").resolve(NodeCertificate.AUTHORITY)));
    assertTrue(refused(dir.resolve("build-1"), "build-1", "10.0.0.6", NOW).contains("holds 2 certificates"));
    Files.writeString(ca, Files.readString(dir.resolve("build-1").resolve(NodeCertificate.CERTIFICATE)));
    assertTrue(refused(dir.resolve("build-1"), "build-1", "10.0.0.6", NOW).contains("not a self-signed authority"));
    Files.writeString(ca, one);
    Files.copy(dir.resolve("ca").resolve(ClusterAuthority.AUTHORITY_KEY),
        dir.resolve("build-1").resolve(ClusterAuthority.AUTHORITY_KEY));
    assertTrue(refused(dir.resolve("build-1"), "build-1", "10.0.0.6", NOW).contains("never on a node"));
    // Issued into the authority's own folder, the key would travel with the node's files.
    assertThrows(FileAlreadyExistsException.class,
        () -> ClusterAuthority.issue(dir.resolve("ca"), "build-2", "10.0.0.7", dir.resolve("ca"), 30, NOW));
    // A node's certificate ends no later than its authority's.
    X509Certificate late = ClusterAuthority.issue(dir.resolve("ca"), "build-3", "10.0.0.8", dir.resolve("build-3"),
        3650, NOW.plus(Duration.ofDays(3000)));
    assertEquals(NodeCertificate.authority(dir.resolve("ca").resolve(NodeCertificate.AUTHORITY)).getNotAfter(),
        late.getNotAfter());
  }

  private static String refused(Path folder, String node, String host, Instant now) {
    return assertThrows(IllegalStateException.class, () -> NodeCertificate.load(folder, node, host, now)).getMessage();
  }
}
