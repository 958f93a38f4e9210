package io.switchboard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.ChatClient;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.Ports;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile agent against the real jar at the systemd unit's heap (-Xmx64m): it runs {@code yes}
 * in 32 terminals, reads a named pipe and a 20 MiB file, then asks a question. The gateway must
 * stay up and answering, keep terminal output within a budget sized from its heap, refuse the
 * pipe and the oversized file with clear errors, and still carry the question to a human.
 */
class HostileAgentIT extends BadAgentJar {

  @Test
  void floodingTerminalsPipesAndBigFilesCannotTakeA64MiBGatewayDown() throws Exception {
    JarGateway started = start(config("flood", new JsonObject()), List.of("-Xmx64m", "-XX:+UseSerialGC"));
    ChatClient web = ChatClient.open(vertx, started.port(), token());
    web.next("welcome");
    String thread = web.send(new JsonObject().put("type", "new_thread")).next("thread").getString("threadId");
    web.send(new JsonObject().put("type", "attach").put("threadId", thread));
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "flood"));

    JsonObject card = web.next(f -> "permission_request".equals(f.getString("type")), "the question after the flood");
    web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", "allow"));
    JsonObject end = web.next(f -> "event".equals(f.getString("type"))
        && "turn_ended".equals(f.getJsonObject("event").getString("kind")), "the end of the turn");
    assertEquals("end_turn", end.getJsonObject("event").getString("stopReason"), "the answer reached the agent");

    JsonObject report = report(web.seen);
    long heap = 64L * 1024 * 1024;
    assertTrue(report.getInteger("terminals") >= 1, report.encode());
    assertTrue(report.getLong("kept") <= heap / 8, "terminal output kept: " + report.getLong("kept"));
    assertTrue(report.getString("pipe").contains("not a regular file"), report.encode());
    assertTrue(report.getString("big").contains("larger than"), report.encode());

    HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + started.port() + "/healthz")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode());
    // Figures for docs/performance.md ("A hostile agent at -Xmx64m"), printed, never asserted.
    String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + started.port() + "/metrics")).header("Authorization", "Bearer " + token())
        .build(), HttpResponse.BodyHandlers.ofString()).body();
    double heapUsed = metrics.lines().filter(l -> l.startsWith("jvm_memory_used_bytes{area=\"heap\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    String rss = Files.readAllLines(Path.of("/proc", Long.toString(gateway.pid()), "status")).stream()
        .filter(l -> l.startsWith("VmRSS")).findFirst().orElse("VmRSS ?");
    System.out.printf("hostile agent at -Xmx64m: %d terminals kept %,d chars; heap used %.1f MiB; %s%n",
        report.getInteger("terminals"), report.getLong("kept"), heapUsed / (1 << 20), rss.replaceAll("\\s+", " "));
    assertTrue(gateway.isAlive());
    assertFalse(Files.readString(dir.resolve("gateway.log")).contains("OutOfMemoryError"));
    assertFalse(Files.exists(dir.resolve("gateway.out")) && Files.readString(dir.resolve("gateway.out"))
        .contains("OutOfMemoryError"));

    // A graceful stop: nothing the agent started outlives the gateway, and the ledger's chain holds.
    gateway.destroy();
    assertTrue(gateway.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(0, gateway.exitValue());
    String owner = io.switchboard.process.ProcessTree.ownerOf(dir.resolve("data"));
    io.switchboard.testkit.PermissionHarness.waitFor(() -> io.switchboard.process.ProcessTree.carrying(
        io.switchboard.process.ProcessTree.OWNER_VARIABLE, owner).isEmpty(), "everything the agent started to be gone");
    Process verify = new ProcessBuilder("java", "-jar", JarGateway.JAR.toString(), "ledger", "verify", "--data-dir",
        dir.resolve("data").toString()).redirectErrorStream(true).start();
    String verdict = new String(verify.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(verify.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(0, verify.exitValue(), verdict);
    assertTrue(verdict.contains("intact"), verdict);
  }

  @Test
  void theAgentCannotAnswerItsOwnQuestionThroughTheGateway() throws Exception {
    int port = Ports.free();
    // The worst case: the agent knows the gateway's port (a sandbox shares the host's network).
    Path file = config("self-approve", new JsonObject().put("env", new JsonObject()
        .put("BAD_AGENT_GATEWAY_PORT", Integer.toString(port))));
    JarGateway started = start(file, List.of("-Xmx64m", "-XX:+UseSerialGC"), port);
    assertEquals(port, started.port());
    ChatClient web = ChatClient.open(vertx, port, token());
    web.next("welcome");
    String thread = web.send(new JsonObject().put("type", "new_thread")).next("thread").getString("threadId");
    web.send(new JsonObject().put("type", "attach").put("threadId", thread));
    web.send(new JsonObject().put("type", "prompt").put("threadId", thread).put("text", "approve yourself"));
    JsonObject card = web.next(f -> "permission_request".equals(f.getString("type")), "the agent's question");

    // While its card waits, the agent tried every door; each was shut.
    web.next(f -> chunk(f).startsWith("REPORT:"), "the agent's report of its attempts");
    JsonObject report = report(web.seen);
    assertTrue(report.getString("token").startsWith("refused"), report.encode());
    assertEquals(401, report.getInteger("permissions"), report.encode());
    assertEquals(401, report.getInteger("permissionsBearer"), report.encode());
    assertEquals(401, report.getInteger("login"), report.encode());
    assertEquals(401, report.getInteger("socket"), report.encode());

    // Only the human's answer reaches the agent, and the ledger names the web as the answerer.
    web.send(new JsonObject().put("type", "permission_answer").put("requestId", card.getString("requestId"))
        .put("optionId", "reject"));
    web.next(f -> chunk(f).startsWith("OUTCOME:"), "the outcome the agent got");
    String outcome = web.seen.stream().map(BadAgentJar::chunk).filter(c -> c.startsWith("OUTCOME:"))
        .findFirst().orElseThrow();
    assertEquals(new JsonObject().put("outcome", "selected").put("optionId", "reject"),
        new JsonObject(outcome.substring(8).trim()));
    HttpResponse<String> audit = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/api/permissions?state=all"))
        .header("Authorization", "Bearer " + token()).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, audit.statusCode(), audit.body());
    JsonObject row = new JsonObject(audit.body()).getJsonArray("requests").stream().map(JsonObject.class::cast)
        .filter(r -> card.getString("requestId").equals(r.getString("requestId"))).findFirst().orElseThrow();
    assertEquals("reject", row.getJsonObject("outcome").getString("optionId"), row.encode());
    assertEquals("web", row.getJsonObject("outcome").getJsonObject("answeredBy").getString("surface"), row.encode());
    assertEquals("selected", row.getString("state"), row.encode());
  }
}
