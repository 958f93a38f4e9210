package io.switchboard.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.rules.Presets;
import io.switchboard.rules.Rule;
import io.switchboard.rules.RuleSpecs;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.GatewayHarness;
import io.switchboard.testkit.StdioPeer;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.Select;

/**
 * Rules as the page shows them, in Debian's Chromium (headless) against the whole gateway at phone
 * size (390x844): a request a rule answered is one line, never a card (and stays so after a reload);
 * a card's "Always allow" opens the grant chooser, whose grant answers the next request until it is
 * revoked in the Rules view; a command's grant keeps only its first words, and the gateway's refusal
 * shows in the chooser; the Rules view lists the config's rules without a revoke button and fits a
 * phone. Screenshots go to target/screenshots.
 */
@ExtendWith(VertxExtension.class)
class BrowserRulesTest extends BrowserClass {
  /** The demo agent's edit of its notes file, allowed. */
  static final JsonObject NOTES_RULE = new JsonObject().put("id", "notes").put("effect", "allow")
      .put("kinds", new JsonArray().add("edit")).put("paths", new JsonArray().add("**/demo-notes.md"));
  /** A rule that has nothing to do with the demo's edit: its cards still ask. */
  static final JsonObject NO_RM_RULE = new JsonObject().put("id", "no-rm").put("effect", "deny")
      .put("kinds", new JsonArray().add("execute")).put("command", "rm").put("note", "never delete by rule");
  static final String DONE = "Done: your note is in demo-notes.md.";

  @TempDir
  Path root;
  GatewayHarness gateway;

  @BeforeEach
  void start(Vertx vertx, TestInfo info) throws Exception {
    Path dir = Files.createDirectories(root.resolve(testName));
    AgentSpec demo = AgentHarness.demo();
    AgentSpec commands = AgentHarness.javaMain("commands", CommandAgent.class);
    Settings settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false, List.of()),
        dir.resolve("data"), demo.id(), List.of(demo, commands), List.of(), Settings.LogFormat.TEXT);
    List<Rule> rules = new ArrayList<>();
    if (testName.startsWith("aRule")) {
      rules.add(RuleSpecs.fromConfig(NOTES_RULE));
    }
    if (testName.startsWith("theRulesView")) {
      rules.add(RuleSpecs.fromConfig(NO_RM_RULE));
      rules.addAll(Presets.of("readWorktree", List.of()));
    }
    gateway = new GatewayHarness(vertx, settings.withRules(rules), Gateway.Tuning.DEFAULT);
    browser.manage().window().setSize(new Dimension(390, 844));
  }

  @AfterEach
  void stop() {
    page.forget();
    gateway.close();
  }

  private void logIn() {
    page.logIn("http://127.0.0.1:" + gateway.port + "/", gateway.token);
  }

  private void openMenu() {
    page.openMenu();
  }

  /** Opens the phone menu and starts a thread of {@code agent} from it; its id. */
  private String startThread(String agent) {
    openMenu();
    new Select(browser.findElement(By.id("agent-select"))).selectByValue(agent);
    int before = browser.findElements(By.cssSelector("#threads li")).size();
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElement(By.id("input")).isEnabled()
        && d.findElements(By.cssSelector("#threads li")).size() == before + 1);
    return waiting().until(d -> currentThread());
  }

  /** The thread the page shows, from its own store. */
  private String currentThread() {
    return page.currentThread();
  }

  private void say(String text) {
    page.say(text);
  }

  /** How many times the open thread's log says {@code text}. */
  private int count(String text) {
    String log = browser.findElement(By.id("log")).getDomProperty("textContent");
    int n = 0;
    for (int at = log.indexOf(text); at >= 0; at = log.indexOf(text, at + 1)) {
      n++;
    }
    return n;
  }

  /** Waits until the log says {@code text} {@code n} times and the turn is over. */
  private void awaitSaid(String text, int n) {
    waiting().until(d -> count(text) == n && !d.findElement(By.id("busy")).isDisplayed());
  }

  private WebElement awaitCard() {
    return page.awaitCard();
  }

  private List<WebElement> openCards() {
    return browser.findElements(By.cssSelector(".card:not(.resolved)"));
  }

  private WebElement chooser() {
    return waiting().until(d -> d.findElements(By.cssSelector(".grant-chooser")).stream()
        .filter(WebElement::isDisplayed).findFirst().orElse(null));
  }

  /** Whether the element is wholly inside the window. */
  private boolean inView(WebElement e) {
    return page.inView(e);
  }

  /** Whether the element fits the window's width (it may be scrolled out of sight vertically). */
  private boolean withinWidth(WebElement e) {
    return (Boolean) script("const r = arguments[0].getBoundingClientRect(); return r.width > 0 && r.left >= 0 "
        + "&& r.right <= window.innerWidth;", e);
  }

  /** Picks the chooser's radio of {@code name} ({@code reach}, {@code life}) with {@code value}, by its label. */
  private void choose(WebElement chooser, String name, String value) {
    WebElement input = chooser.findElement(By.cssSelector("input[name='grant-" + name + "'][value='" + value + "']"));
    input.findElement(By.xpath("./ancestor::label")).click();
    waiting().until(d -> input.isSelected());
  }

  private WebElement button(WebElement within, String text) {
    return within.findElements(By.tagName("button")).stream().filter(b -> b.getText().startsWith(text)).findFirst()
        .orElseThrow(() -> new AssertionError("no button " + text + " in " + within.getText()));
  }

  /** Opens the Rules view from the menu, its list drawn. */
  private WebElement openRules() {
    openMenu();
    browser.findElement(By.id("rules-open")).click();
    WebElement view = waiting().until(d -> d.findElement(By.id("rules")).isDisplayed() ? d.findElement(By.id("rules"))
        : null);
    waiting().until(d -> !d.findElements(By.cssSelector("#rules li")).isEmpty()
        && d.findElement(By.id("rules-note")).getText().isEmpty());
    return view;
  }

  private WebElement ruleItem(String ruleId) {
    return waiting().until(d -> d.findElements(By.cssSelector("#rules li[data-rule-id='" + ruleId + "']")).stream()
        .findFirst().orElse(null));
  }

  @Test
  void aRuleAnswersWithoutACardAndTheThreadSaysWhichRule() throws Exception {
    logIn();
    String threadId = startThread("demo");
    say("note this");
    WebElement line = waiting().until(d -> d.findElements(By.cssSelector(".auto-answer")).stream().findFirst()
        .orElse(null));
    awaitSaid(DONE, 1);
    assertTrue(line.getText().startsWith("✅ Allowed by rule notes"), line.getText());
    assertTrue(line.findElement(By.cssSelector(".matched")).getText().contains("kind=edit"), line.getText());
    assertTrue(browser.findElements(By.cssSelector(".card")).isEmpty(), "no card: the rule answered");
    assertTrue(line.findElements(By.cssSelector(".revoke")).isEmpty(), "a config rule is not revoked here");
    assertEquals(1, browser.findElements(By.cssSelector(".tool .auto-answer")).size(), "in its tool call's box");
    assertTrue(inView(line), "the line shows at phone size");
    String notes = Files.readString(gateway.workspace(threadId).resolve("demo-notes.md"));
    assertTrue(notes.contains("- note this"), notes);
    screenshot("auto-answer");

    // History draws it again, as the line, not as a card.
    browser.navigate().refresh();
    WebElement again = waiting().until(d -> d.findElements(By.cssSelector(".auto-answer")).stream().findFirst()
        .orElse(null));
    assertTrue(again.getText().startsWith("✅ Allowed by rule notes"), again.getText());
    waiting().until(d -> count(DONE) == 1);
    assertTrue(browser.findElements(By.cssSelector(".card")).isEmpty(), "still no card after a reload");
    assertEquals(1, browser.findElements(By.cssSelector(".tool .auto-answer")).size(), "in its box again");
  }

  @Test
  void alwaysBecomesAGrantThatAnswersUntilItIsRevokedInTheRulesView() throws Exception {
    logIn();
    String threadId = startThread("demo");
    say("note this");
    WebElement card = awaitCard();
    WebElement always = card.findElement(By.cssSelector(".options button.allow_always"));
    always.click();
    WebElement chooser = chooser();
    assertTrue(chooser.getDomAttribute("class").contains("sheet"), "a sheet at the bottom of a phone");
    assertEquals(Boolean.TRUE, script("return Math.abs(arguments[0].getBoundingClientRect().bottom - window.innerHeight)"
        + " < 1", chooser), "at the bottom");
    assertTrue(chooser.findElements(By.cssSelector("input[value='project']")).isEmpty(), "no project: no such reach");
    assertEquals(Boolean.TRUE, script("return document.getElementById('app').inert"), "the page behind the sheet waits");
    assertEquals("grant-reach", browser.switchTo().activeElement().getDomAttribute("name"), "the keyboard is in it");
    // Escape cancels; the card is still answerable, and Alt+2 (its "Always allow") opens the chooser again.
    new Actions(browser).sendKeys(Keys.ESCAPE).perform();
    waiting().until(d -> d.findElements(By.cssSelector(".grant-chooser")).isEmpty());
    assertTrue(always.isEnabled());
    assertEquals(Boolean.FALSE, script("return document.getElementById('app').inert"));
    new Actions(browser).keyDown(Keys.ALT).sendKeys("2").keyUp(Keys.ALT).perform();
    chooser = chooser();

    choose(chooser, "reach", "agent");
    assertFalse(chooser.findElement(By.cssSelector("input[name='grant-life'][value='thread']"))
        .findElement(By.xpath("./ancestor::label")).isDisplayed(), "'while this thread lasts' is for this thread only");
    choose(chooser, "reach", "thread");
    choose(chooser, "life", "thread");
    WebElement preview = chooser.findElement(By.cssSelector(".preview"));
    assertEquals("Will allow: edit demo-notes.md in this thread, while it lasts", preview.getText());
    for (WebElement b : chooser.findElements(By.cssSelector(".grant-actions button"))) {
      assertTrue(inView(b), "the chooser's buttons show at phone size: " + b.getText());
    }
    assertTrue(button(chooser, "Let the agent remember it").getText().contains("Switchboard cannot take this back"));
    screenshot("chooser");
    button(chooser, "Allow always (revocable)").click();

    waiting().until(d -> d.findElements(By.cssSelector(".grant-chooser")).isEmpty());
    WebElement verdict = waiting().until(d -> {
      WebElement v = card.findElement(By.cssSelector(".verdict"));
      return v.getText().contains("kept as rule g_") ? v : null;
    });
    assertTrue(verdict.getText().startsWith("Allowed — kept as rule g_"), verdict.getText());
    String ruleId = verdict.findElement(By.cssSelector(".rule-id")).getText();
    assertTrue(verdict.findElement(By.cssSelector(".revoke")).isDisplayed(), "the card can take it back");
    assertTrue(always.getDomAttribute("class").contains("chosen"), "the person's choice is marked");
    awaitSaid(DONE, 1);
    screenshot("kept-as-rule");

    // The grant answers the next request of this thread: a line, no card.
    say("note this");
    WebElement line = waiting().until(d -> d.findElements(By.cssSelector(".auto-answer")).stream().findFirst()
        .orElse(null));
    awaitSaid(DONE, 2);
    assertTrue(line.getText().startsWith("✅ Allowed by rule " + ruleId), line.getText());
    assertTrue(openCards().isEmpty(), "no new card");
    assertTrue(line.findElement(By.cssSelector(".revoke")).isDisplayed(), "a grant's line can revoke it");
    assertTrue(inView(line), "the line shows at phone size");
    String notes = Files.readString(gateway.workspace(threadId).resolve("demo-notes.md"));
    assertEquals(2, notes.split("- note this", -1).length - 1, notes);

    // The Rules view lists it, used once, and revokes it.
    openRules();
    WebElement item = ruleItem(ruleId);
    assertTrue(item.getText().contains("used 1 time, last at "), item.getText());
    assertTrue(item.getText().contains("while its thread lasts"), item.getText());
    assertTrue(item.getText().contains("thread “note this”"), "its thread by title: " + item.getText());
    WebElement revoke = item.findElement(By.cssSelector(".revoke"));
    assertTrue(inView(revoke));
    screenshot("rules-with-grant");
    revoke.click();
    WebElement ended = waiting().until(d -> d.findElements(
        By.cssSelector("#rules-ended-list li[data-rule-id='" + ruleId + "']")).stream().findFirst().orElse(null));
    assertTrue(browser.findElements(By.cssSelector("#rules-list li[data-rule-id='" + ruleId + "']")).isEmpty());
    WebElement endedTitle = browser.findElement(By.id("rules-ended-title"));
    assertEquals("Revoked (1)", endedTitle.getText());
    endedTitle.click(); // collapsed until asked
    waiting().until(d -> ended.isDisplayed());
    assertTrue(ended.getText().contains("revoked by web at "), ended.getText());
    assertTrue(ended.findElements(By.cssSelector(".revoke")).isEmpty(), "nothing left to revoke");
    screenshot("revoked");

    // Back in the thread: the line's button says it is revoked, and the next request asks again.
    openMenu();
    browser.findElements(By.cssSelector("#threads button")).get(0).click();
    waiting().until(d -> d.findElement(By.id("input")).isDisplayed());
    WebElement lineRevoke = browser.findElement(By.cssSelector(".auto-answer .revoke"));
    assertEquals("Revoked", lineRevoke.getText());
    assertFalse(lineRevoke.isEnabled());
    say("note this");
    WebElement third = awaitCard();
    assertTrue(third.findElement(By.cssSelector(".options button.allow_once")).isDisplayed());
    assertEquals(1, browser.findElements(By.cssSelector(".auto-answer")).size(), "no rule answered it");
    third.findElement(By.cssSelector(".options button.allow_once")).click();
    awaitSaid(DONE, 3);

    // History keeps how each ended: the grant's card, the grant's line, and the card asked again.
    browser.navigate().refresh();
    waiting().until(d -> count(DONE) == 3 && d.findElements(By.cssSelector(".card.resolved")).size() == 2);
    List<WebElement> cards = browser.findElements(By.cssSelector(".card.resolved"));
    assertTrue(cards.get(0).findElement(By.cssSelector(".verdict")).getText()
        .startsWith("Allowed — kept as rule " + ruleId), cards.get(0).getText());
    assertTrue(cards.get(1).findElement(By.cssSelector(".verdict")).getText().startsWith("Allow once — answered by web"));
    assertEquals(1, browser.findElements(By.cssSelector(".auto-answer")).size());
  }

  @Test
  void atDesktopSizeTheChooserOpensInsideTheCard() throws Exception {
    browser.manage().window().setSize(new Dimension(1280, 900));
    logIn();
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElement(By.id("input")).isEnabled());
    say("note this");
    WebElement card = awaitCard();
    card.findElement(By.cssSelector(".options button.allow_always")).click();
    WebElement chooser = chooser();
    assertFalse(chooser.getDomAttribute("class").contains("sheet"), "inline, not a sheet");
    assertEquals(1, card.findElements(By.cssSelector(".grant-chooser")).size(), "inside the card");
    assertTrue(browser.findElements(By.cssSelector(".grant-backdrop")).isEmpty());
    assertEquals("grant-reach", browser.switchTo().activeElement().getDomAttribute("name"), "the keyboard is in it");
    for (WebElement b : chooser.findElements(By.cssSelector(".grant-actions button"))) {
      assertTrue(inView(b), b.getText());
    }
    screenshot("desktop-chooser");
    new Actions(browser).sendKeys(Keys.ESCAPE).perform();
    waiting().until(d -> d.findElements(By.cssSelector(".grant-chooser")).isEmpty());
    assertEquals("allow-always", browser.switchTo().activeElement().getDomAttribute("data-option-id"),
        "the keyboard is back on the option that opened it");
    // "Let the agent remember it": the plain answer, as before rules (the agent keeps it).
    new Actions(browser).sendKeys(Keys.ENTER).perform();
    button(chooser(), "Let the agent remember it").click();
    waiting().until(d -> card.findElement(By.cssSelector(".verdict")).getText().startsWith("Always allow — answered by web"));
    assertFalse(card.getText().contains("kept as rule"));
  }

  @Test
  void aCommandsGrantKeepsItsFirstWordsAndTheGatewaysRefusalShowsInTheChooser() throws Exception {
    logIn();
    startThread("commands");
    say("git diff --stat HEAD");
    WebElement card = awaitCard();
    card.findElement(By.cssSelector(".options button.allow_always")).click();
    WebElement chooser = chooser();
    List<WebElement> chips = chooser.findElements(By.cssSelector(".chips .chip"));
    assertEquals(List.of("git", "diff", "--stat", "HEAD"), chips.stream().map(WebElement::getText).toList());
    assertTrue(chips.stream().allMatch(c -> "true".equals(c.getDomAttribute("aria-pressed"))), "all kept at first");
    WebElement preview = chooser.findElement(By.cssSelector(".preview"));
    assertEquals("Will allow: execute `git diff --stat HEAD …` in this thread, while it lasts", preview.getText());
    chips.get(1).click(); // keep "git diff"
    assertEquals(List.of("true", "true", "false", "false"),
        chips.stream().map(c -> c.getDomAttribute("aria-pressed")).toList());
    choose(chooser, "life", "day");
    assertEquals("Will allow: execute `git diff …` in this thread, for a day", preview.getText());
    screenshot("command-chooser");
    button(chooser, "Allow always (revocable)").click();
    waiting().until(d -> card.findElement(By.cssSelector(".verdict")).getText().contains("kept as rule g_"));
    awaitSaid("chose allow-once", 1); // the agent is answered once; the gateway keeps the "always"

    // Another diff is answered by the grant; a log is not covered by it.
    say("git diff main");
    WebElement line = waiting().until(d -> d.findElements(By.cssSelector(".auto-answer")).stream().findFirst()
        .orElse(null));
    awaitSaid("chose allow-once", 2);
    assertTrue(line.getText().contains("Allowed by rule g_"), line.getText());
    assertTrue(line.findElement(By.cssSelector(".matched")).getText().contains("command=git diff main"), line.getText());
    assertTrue(line.findElement(By.xpath("./..")).getText().contains("Run git diff main"), "inside the box of its call");
    say("git log");
    WebElement log = awaitCard();
    log.findElement(By.cssSelector(".options button.reject_once")).click();
    awaitSaid("chose reject", 1);

    // A command with a pipe is no plain command: the gateway refuses to narrow it, said in the chooser.
    say("git diff | cat");
    WebElement piped = awaitCard();
    piped.findElement(By.cssSelector(".options button.allow_always")).click();
    WebElement again = chooser();
    assertTrue(again.findElement(By.cssSelector(".preview")).getText().contains("is not one plain command"),
        "the chooser says before anything is sent that no \"always\" covers a compound command");
    again.findElements(By.cssSelector(".chips .chip")).get(1).click();
    button(again, "Allow always (revocable)").click();
    WebElement error = waiting().until(d -> {
      WebElement e = again.findElement(By.cssSelector(".grant-error"));
      return e.isDisplayed() ? e : null;
    });
    assertTrue(error.getText().startsWith("The gateway did not keep it: "), error.getText());
    assertTrue(error.getText().contains("no plain command") && error.getText().contains("answered once, never granted"),
        error.getText());
    assertTrue(inView(error), "said where the person looks");
    screenshot("refused");
    button(again, "Cancel").click();
    waiting().until(d -> d.findElements(By.cssSelector(".grant-chooser")).isEmpty());
    WebElement once = piped.findElement(By.cssSelector(".options button.allow_once"));
    assertTrue(once.isEnabled(), "the card is still answerable");
    once.click();
    awaitSaid("chose allow-once", 3);
  }

  @Test
  void theRulesViewListsTheConfigsRulesWithoutRevokeAndFitsAPhone() throws Exception {
    logIn();
    startThread("demo");
    // A grant too, so the list has a revoke button to show.
    say("note this");
    awaitCard().findElement(By.cssSelector(".options button.allow_always")).click();
    button(chooser(), "Allow always (revocable)").click();
    awaitSaid(DONE, 1);

    openRules();
    WebElement config = ruleItem("no-rm");
    assertTrue(config.getText().contains("from the config"), config.getText());
    assertTrue(config.getText().contains("never delete by rule"), "its note: " + config.getText());
    assertTrue(config.getText().contains("never used"), config.getText());
    assertTrue(config.findElements(By.cssSelector(".revoke")).isEmpty(), "a config rule is changed in the config");
    WebElement preset = ruleItem("preset.readWorktree");
    assertTrue(preset.findElements(By.cssSelector(".revoke")).isEmpty());
    assertEquals("preset", preset.findElement(By.cssSelector(".badge.source")).getText());
    List<WebElement> grants = browser.findElements(By.cssSelector("#rules-list li[data-rule-id^='g_']"));
    assertEquals(1, grants.size());
    assertEquals("grant", grants.get(0).findElement(By.cssSelector(".badge.source")).getText());
    assertTrue(browser.findElement(By.id("rules-ended")).getDomAttribute("hidden") != null, "nothing revoked yet");

    // At 390x844: every rule, and every button, within the width; each in sight once scrolled to.
    assertFalse(browser.findElement(By.id("app")).getDomAttribute("class").contains("menu-open"), "the menu closed");
    assertTrue(withinWidth(browser.findElement(By.id("rules-list"))));
    List<WebElement> items = browser.findElements(By.cssSelector("#rules li[data-rule-id]"));
    assertEquals(3, items.size());
    List<WebElement> buttons = new ArrayList<>(browser.findElements(By.cssSelector("#rules button")));
    assertEquals(2, buttons.size(), "Refresh, and the grant's Revoke");
    for (WebElement e : items) {
      script("arguments[0].scrollIntoView({block: 'nearest'})", e);
      assertTrue(inView(e), e.getText());
    }
    for (WebElement b : buttons) {
      script("arguments[0].scrollIntoView({block: 'nearest'})", b);
      assertTrue(inView(b), b.getText());
      assertTrue(b.getSize().getHeight() >= 44, "a 44 px target: " + b.getText());
    }
    assertEquals(Boolean.FALSE, script("return document.getElementById('rules').scrollWidth > "
        + "document.getElementById('rules').clientWidth"), "no sideways scrolling");
    screenshot("rules-view");

    // Refresh asks again; a thread opened from the menu leaves the view.
    browser.findElement(By.id("rules-refresh")).click();
    waiting().until(d -> d.findElement(By.id("rules-note")).getText().isEmpty());
    openMenu();
    browser.findElements(By.cssSelector("#threads button")).get(0).click();
    waiting().until(d -> !d.findElement(By.id("rules")).isDisplayed() && d.findElement(By.id("input")).isDisplayed());
  }

  /**
   * An agent that asks to run its prompt as a command ({@code rawInput.command} a string, as many
   * agents send it) and says which option it was given: "chose allow-once".
   */
  public static final class CommandAgent extends StdioPeer {
    private final AtomicInteger calls = new AtomicInteger();

    public static void main(String[] args) throws Exception {
      new CommandAgent().run();
    }

    @Override
    protected Object handle(String method, JsonObject params) throws Exception {
      switch (method) {
        case "initialize":
          return new JsonObject().put("protocolVersion", 1).put("agentCapabilities", new JsonObject())
              .put("authMethods", new JsonArray());
        case "session/new":
          return new JsonObject().put("sessionId", "commands-1");
        case "session/prompt":
          return prompt(params.getString("sessionId"), params.getJsonArray("prompt").getJsonObject(0).getString("text"));
        default:
          return new JsonObject();
      }
    }

    private JsonObject prompt(String sessionId, String command) throws Exception {
      String id = "run-" + calls.incrementAndGet();
      JsonObject toolCall = new JsonObject().put("toolCallId", id).put("title", "Run " + command).put("kind", "execute")
          .put("rawInput", new JsonObject().put("command", command));
      send(new JsonObject().put("jsonrpc", "2.0").put("method", "session/update").put("params", new JsonObject()
          .put("sessionId", sessionId).put("update", toolCall.copy().put("sessionUpdate", "tool_call")
              .put("status", "pending"))));
      JsonObject answer = request("session/request_permission", new JsonObject().put("sessionId", sessionId)
          .put("toolCall", toolCall).put("options", new JsonArray()
              .add(new JsonObject().put("optionId", "allow-once").put("name", "Allow once").put("kind", "allow_once"))
              .add(new JsonObject().put("optionId", "allow-always").put("name", "Always allow")
                  .put("kind", "allow_always"))
              .add(new JsonObject().put("optionId", "reject").put("name", "Reject").put("kind", "reject_once"))));
      JsonObject outcome = answer.getJsonObject("result", new JsonObject()).getJsonObject("outcome", new JsonObject());
      send(chunk(sessionId, "chose " + outcome.getString("optionId", outcome.getString("outcome")) + "."));
      return new JsonObject().put("stopReason", "end_turn");
    }
  }
}
