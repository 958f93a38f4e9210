package io.switchboard.agent;

import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.PermissionHarness;

/** Small waits shared by the agent tests. */
final class PermissionHarnessBridge {
  private PermissionHarnessBridge() {}

  static void waitForHistory(AgentHarness gateway, String threadId, int count) {
    PermissionHarness.waitFor(() -> gateway.history(threadId, 0).size() == count, count + " events in the transcript");
  }

  static void waitForEnd(AgentHarness gateway, String requestId, String reason) {
    PermissionHarness.waitFor(() -> gateway.ended.stream().anyMatch(e -> e.getString("requestId").equals(requestId)
        && reason.equals(e.getJsonObject("outcome").getString("reason"))), "request " + requestId + " to end " + reason);
  }
}
