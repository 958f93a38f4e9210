package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.config.SettingsLoader.Override;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandLineTest {
  @Test
  void serveIsTheDefault() throws Exception {
    CommandLine cli = CommandLine.parse(List.of("--port", "0", "--data-dir=/tmp/x"));
    assertEquals(CommandLine.Command.SERVE, cli.command());
    assertEquals("0", cli.flags().get(Override.PORT));
    assertEquals("/tmp/x", cli.flags().get(Override.DATA_DIR));
  }

  @Test
  void tokenAndRotate() throws Exception {
    CommandLine cli = CommandLine.parse(List.of("token", "--rotate"));
    assertEquals(CommandLine.Command.TOKEN, cli.command());
    assertTrue(cli.rotate());
  }

  @Test
  void doctorAndLedger() throws Exception {
    assertEquals(CommandLine.Command.DOCTOR, CommandLine.parse(List.of("doctor")).command());
    CommandLine ledger = CommandLine.parse(List.of("ledger", "--json", "--state", "pending", "--limit", "5"));
    assertEquals(CommandLine.Command.LEDGER, ledger.command());
    assertTrue(ledger.json());
    assertEquals("pending", ledger.state());
    assertEquals(5, ledger.limit());
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("serve", "--json")))
        .getMessage().startsWith("--json"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("ledger", "--state", "odd")))
        .getMessage().startsWith("--state"));
  }

  @Test
  void helpAndVersionWin() throws Exception {
    assertEquals(CommandLine.Command.HELP, CommandLine.parse(List.of("--port", "1", "--help")).command());
    assertEquals(CommandLine.Command.VERSION, CommandLine.parse(List.of("--version")).command());
  }

  @Test
  void mistakesNameTheArgument() {
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("--colour", "x")))
        .getMessage().startsWith("--colour"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("--port")))
        .getMessage().startsWith("--port"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("launch")))
        .getMessage().startsWith("launch"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("serve", "--rotate")))
        .getMessage().startsWith("--rotate"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("--port", "1", "--port", "2")))
        .getMessage().contains("twice"));
  }

  @Test
  void clusterCertificatesTakeTheirOwnOptions() throws Exception {
    CommandLine ca = CommandLine.parse(List.of("cluster", "ca", "--dir", "/tmp/ca"));
    assertEquals(CommandLine.Command.CLUSTER, ca.command());
    assertEquals("ca", ca.action());
    assertEquals("/tmp/ca", ca.options().get("dir"));
    CommandLine cert = CommandLine.parse(List.of("cluster", "cert", "--name", "build-1", "--address", "10.0.0.6",
        "--days", "30"));
    assertEquals("cert", cert.action());
    assertEquals("build-1", cert.options().get("name"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("cluster")))
        .getMessage().startsWith("cluster"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("cluster", "cert", "--name", "a")))
        .getMessage().contains("needs --address"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("cluster", "ca", "--name", "a")))
        .getMessage().startsWith("--name"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("cluster", "cert", "--name",
        "a b", "--address", "10.0.0.6"))).getMessage().startsWith("--name"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("cluster", "cert", "--name",
        "a", "--address", "10.0.0.6", "--days", "0"))).getMessage().startsWith("--days"));
    assertTrue(assertThrows(UsageException.class, () -> CommandLine.parse(List.of("policy", "check", "--kind", "read",
        "--dir", "x"))).getMessage().startsWith("--dir"));
  }
}
