package io.switchboard.permission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Who in a chat may answer: the rule the permission room alone applies, from a table. */
class ChatApprovalTest {
  private static ChatApproval.Verdict judge(List<String> approvers, boolean groups, boolean anonymous, String user,
                                            String startedBy) {
    return new ChatApproval(approvers, groups, anonymous).judge(user, startedBy);
  }

  @Test
  void listedApproversAnswerAndNobodyElse() {
    assertTrue(judge(List.of("7", "8"), false, false, "8", "1").allowed());
    ChatApproval.Verdict stranger = judge(List.of("7", "8"), false, false, "1", "1");
    assertFalse(stranger.allowed(), "the thread's starter is not an approver when the plugin lists them");
    assertEquals("Only 7, 8 may answer that request (or the web chat).", stranger.refusal());
  }

  @Test
  void withoutApproversOnlyTheThreadsStarterAnswers() {
    assertTrue(judge(List.of(), false, false, "1", "1").allowed());
    assertFalse(judge(List.of(), false, false, "2", "1").allowed());
    assertFalse(judge(List.of(), false, false, "2", null).allowed(), "nobody started it: nobody from a chat");
    assertEquals("Only 1 may answer that request (or the web chat).", judge(List.of(), false, false, "2", "1").refusal());
  }

  @Test
  void anUnnamedTapInADirectMessageIsTheThreadsStarter() {
    ChatApproval.Verdict v = judge(List.of(), false, false, null, "1");
    assertTrue(v.allowed());
    assertEquals("1", v.who());
  }

  @Test
  void anAnonymousGroupTapCountsOnlyWithCardsInGroupsAndIsNeverNamed() {
    ChatApproval.Verdict closed = judge(List.of("a group member"), false, true, null, "1");
    assertFalse(closed.allowed(), "a label is not a person: an anonymous tap never matches an approver");
    ChatApproval.Verdict open = judge(List.of("7"), true, true, "7", "1");
    assertTrue(open.allowed());
    assertEquals(ChatApproval.GROUP_MEMBER, open.who(), "the audit never names who it cannot know");
  }

  @Test
  void aMalformedChatPartIsRefusedWithTheFieldNamed() {
    assertEquals("chat must be an object", assertThrows(IllegalArgumentException.class,
        () -> ChatApproval.parse("x")).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChatApproval.parse(
        new JsonObject().put("approvers", new io.vertx.core.json.JsonArray().add(3)))).getMessage()
        .contains("chat.approvers"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChatApproval.parse(
        new JsonObject().put("anonymous", "yes"))).getMessage().contains("chat.anonymous"));
    ChatApproval back = ChatApproval.parse(new ChatApproval(List.of("7"), true, false).toJson());
    assertEquals(new ChatApproval(List.of("7"), true, false), back);
  }
}
