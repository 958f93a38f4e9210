package io.switchboard.faults;

import io.switchboard.testkit.PermissionHarness;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What a fault suite on the real jar holds for its runs: a Vert.x for its clients, the run's
 * folder, the gateway process it kills and starts again (never left running after the test),
 * its port and token, and the steps the run took.
 */
abstract class JarFaultSuite {
  Vertx vertx;
  Path dir;
  Process gateway;
  int port;
  String token;
  final List<String> log = new ArrayList<>();

  @BeforeEach
  void startVertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void killWhatIsLeft() {
    if (gateway != null) {
      gateway.destroyForcibly();
    }
    PermissionHarness.await(vertx.close());
  }
}
