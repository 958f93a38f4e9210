package io.switchboard.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.openqa.selenium.support.ui.Select;

/**
 * Agents' questions (ACP elicitation) as a person sees them, in Debian's Chromium (headless) against
 * the whole gateway, the agent the scripted bad agent (src/test/badpeers/bad-agent.js) in its
 * elicit-form, elicit-url and elicit-choice modes: the form fits a phone and a desktop's chat column,
 * the page's own check stops a bad value beside its field and sends nothing, the gateway's refusal is
 * said beside the field it names, a valid answer reaches the agent typed as the schema says and the
 * card shows it with the secret hidden, also after a reload and a gateway restart; a link shows its
 * host and Open answers accept without opening a tab here; Decline answers decline. Screenshots go to
 * target/screenshots.
 */
@ExtendWith(VertxExtension.class)
class BrowserQuestionTest extends BrowserClass {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();
  static final String TOKEN = "s3cret-deploy-token";
  static final String URL = "https://auth.example.com/device?code=ABCD";

  @TempDir
  Path root;
  Settings settings;
  GatewayHarness gateway;

  @BeforeEach
  void start(Vertx vertx, TestInfo info) throws Exception {
    Path dir = Files.createDirectories(root.resolve(testName));
    List<AgentSpec> agents = List.of(agent("form", "elicit-form"), agent("link", "elicit-url"),
        agent("choice", "elicit-choice"), agent("withdraw", "elicit-withdraw"));
    settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false, List.of()), dir.resolve("data"),
        "form", agents, List.of(), Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, settings, Gateway.Tuning.DEFAULT);
    browser.manage().window().setSize(new Dimension(390, 844));
  }

  private static AgentSpec agent(String id, String mode) {
    return new AgentSpec(id, "Bad " + id, null, List.of("node", SCRIPT.toString(), mode), Map.of(), null, null);
  }

  @AfterEach
  void stop() {
    page.forget();
    gateway.close();
  }

  private void logIn() {
    page.logIn(gateway.url("/"), gateway.token);
    // Every frame the page sends, kept where the test can read it (the socket is already open: its
    // instance finds send on the prototype at each call).
    script("window.sentFrames = []; const send = WebSocket.prototype.send;"
        + "WebSocket.prototype.send = function (data) { window.sentFrames.push(String(data)); return send.call(this, data); };");
  }

  /** The permission_answer frames the page sent since logIn. */
  private List<JsonObject> answersSent() {
    List<JsonObject> answers = new ArrayList<>();
    for (Object frame : (List<?>) script("return window.sentFrames;")) {
      JsonObject f = new JsonObject((String) frame);
      if ("permission_answer".equals(f.getString("type"))) {
        answers.add(f);
      }
    }
    return answers;
  }

  /** Starts a thread of {@code agent} (from the phone's menu when the sidebar is hidden) and asks it something. */
  private void askAgent(String agent) {
    if (browser.findElement(By.id("menu")).isDisplayed()) {
      page.openMenu();
    }
    new Select(browser.findElement(By.id("agent-select"))).selectByValue(agent);
    int before = browser.findElements(By.cssSelector("#threads li")).size();
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElement(By.id("input")).isEnabled()
        && d.findElements(By.cssSelector("#threads li")).size() == before + 1);
    page.say("go on, ask me");
  }

  /** The open thread's log, as text (also what is scrolled out of sight). */
  private String log() {
    return browser.findElement(By.id("log")).getDomProperty("textContent");
  }

  /** The agent's REPORT once its turn is over: {advertised, answer} as it received them. */
  private JsonObject report() {
    return waiting().until(d -> {
      String text = log();
      int at = text.indexOf("REPORT:");
      return at < 0 || d.findElement(By.id("busy")).isDisplayed() ? null : jsonAt(text, at + "REPORT:".length());
    });
  }

  /** The JSON object that starts at {@code from} in {@code text} (the reply goes on after it). */
  private static JsonObject jsonAt(String text, int from) {
    int depth = 0;
    boolean quoted = false;
    for (int i = from; i < text.length(); i++) {
      char c = text.charAt(i);
      if (quoted) {
        if (c == '\\') {
          i++;
        } else if (c == '"') {
          quoted = false;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == '{') {
        depth++;
      } else if (c == '}' && --depth == 0) {
        return new JsonObject(text.substring(from, i + 1));
      }
    }
    throw new AssertionError("no whole JSON object after REPORT: in " + text.substring(from));
  }

  /** The one question card, waiting, once its buttons show. */
  private WebElement awaitQuestion() {
    WebElement card = page.awaitCard();
    waiting().until(d -> !card.findElements(By.cssSelector(".permission.question")).isEmpty());
    return card;
  }

  /** The card once it ended, its verdict drawn. */
  private WebElement awaitEnded() {
    return waiting().until(d -> d.findElements(By.cssSelector(".card.resolved .permission.question")).stream()
        .findFirst().map(s -> s.findElement(By.xpath("./.."))).orElse(null));
  }

  private WebElement field(WebElement card, String name) {
    return card.findElement(By.cssSelector(".q-field[data-field='" + name + "']"));
  }

  private WebElement button(WebElement card, String text) {
    return card.findElements(By.cssSelector(".options button")).stream().filter(b -> b.getText().equals(text))
        .findFirst().orElseThrow(() -> new AssertionError("no button " + text + " in " + card.getText()));
  }

  private List<String> buttonNames(WebElement card) {
    return card.findElements(By.cssSelector(".options button")).stream().map(WebElement::getText).toList();
  }

  /** Whether the element is as wide as it is drawn, inside the window's width (it may be scrolled out of sight). */
  private boolean withinWidth(WebElement e) {
    return (Boolean) script("const r = arguments[0].getBoundingClientRect(); return r.width > 0 && r.left >= 0 "
        + "&& r.right <= window.innerWidth;", e);
  }

  private double fontPx(WebElement e) {
    return Double.parseDouble(e.getCssValue("font-size").replace("px", ""));
  }

  /** The rows of an ended form's answer: "Release name: v1.2", … */
  private List<String> answerRows(WebElement card) {
    return card.findElements(By.cssSelector(".question-answer li")).stream()
        .map(li -> li.getDomProperty("textContent")).toList();
  }

  /** Every control and button of the form within the window's width, inputs with 16px text, buttons 44px tall. */
  private void assertFits(WebElement card) {
    List<WebElement> controls = card.findElements(By.cssSelector(
        ".question-form input:not([type=checkbox]):not([type=radio]), .question-form select, .question-form .q-check"));
    assertEquals(6, controls.size(), "name, replicas, token, Europe, America, and notify");
    for (WebElement c : controls) {
      script("arguments[0].scrollIntoView({block: 'nearest'})", c);
      assertTrue(withinWidth(c), "within the width: " + c.getDomProperty("outerHTML"));
      assertTrue(fontPx(c) >= 16, "16px text, no zoom on iOS: " + c.getCssValue("font-size"));
      assertTrue(c.getSize().getHeight() >= 44, "a 44px target: " + c.getDomProperty("outerHTML"));
    }
    for (WebElement b : card.findElements(By.cssSelector(".options button"))) {
      script("arguments[0].scrollIntoView({block: 'nearest'})", b);
      assertTrue(page.inView(b), "the button shows: " + b.getText());
      assertTrue(b.getSize().getHeight() >= 44, "a 44px target: " + b.getText());
    }
    assertEquals(Boolean.FALSE, script("const l = document.getElementById('log'); return l.scrollWidth > l.clientWidth"),
        "no sideways scrolling");
  }

  @Test
  void aFormAtPhoneSizeIsCheckedAnsweredAndShownAgainAfterAReloadAndARestart(Vertx vertx) throws Exception {
    logIn();
    askAgent("form");
    WebElement card = awaitQuestion();
    assertEquals("How should I deploy?", card.findElement(By.cssSelector(".question-message")).getText());
    assertEquals(List.of("name", "replicas", "region", "notify", "token"), card.findElements(By.cssSelector(".q-field"))
        .stream().map(f -> f.getDomAttribute("data-field")).toList());
    assertEquals("Release name *", field(card, "name").findElement(By.cssSelector(".q-label")).getText());
    assertEquals("Replicas", field(card, "replicas").findElement(By.cssSelector(".q-label")).getText());
    assertEquals("Region *", field(card, "region").findElement(By.tagName("legend")).getText());
    assertEquals(List.of("Europe", "America"), field(card, "region").findElements(By.cssSelector(".q-check")).stream()
        .map(WebElement::getText).toList());
    assertEquals("Notify the team", field(card, "notify").getText());
    WebElement name = field(card, "name").findElement(By.tagName("input"));
    assertEquals("2", name.getDomAttribute("minlength"));
    assertTrue(name.getDomProperty("required").equals("true"), "required");
    WebElement replicas = field(card, "replicas").findElement(By.tagName("input"));
    assertEquals("number", replicas.getDomAttribute("type"));
    assertEquals("1", replicas.getDomAttribute("step"));
    assertEquals("1", replicas.getDomAttribute("min"));
    assertEquals("5", replicas.getDomAttribute("max"));
    assertEquals("2", replicas.getDomProperty("value"), "the default filled in");
    WebElement token = field(card, "token").findElement(By.tagName("input"));
    assertEquals("password", token.getDomAttribute("type"), "a secret is typed unseen");
    assertEquals(List.of("Submit", "Decline", "Cancel"), buttonNames(card), "the chat's one-tap options are not drawn");
    assertFits(card);
    screenshot("form");

    // A one-letter name and no region: the page says so beside each, and sends nothing.
    name.sendKeys("x");
    button(card, "Submit").click();
    WebElement nameError = field(card, "name").findElement(By.cssSelector(".q-error"));
    waiting().until(d -> nameError.isDisplayed());
    assertEquals("Needs at least 2 characters", nameError.getText());
    assertEquals("Choose one", field(card, "region").findElement(By.cssSelector(".q-error")).getText());
    assertTrue(field(card, "replicas").findElement(By.cssSelector(".q-error")).getText().isEmpty(), "a good field is quiet");
    assertEquals("true", name.getDomAttribute("aria-invalid"));
    script("arguments[0].scrollIntoView({block: 'nearest'})", nameError);
    assertTrue(page.inView(nameError) && withinWidth(nameError), "said where the person looks");
    assertEquals(List.of(), answersSent(), "nothing sent");
    assertFalse(card.getDomAttribute("class").contains("resolved"), "the card still waits");
    assertTrue(button(card, "Submit").isEnabled());
    screenshot("form-checked");

    // A valid fill: the agent gets the values typed as the schema says; the card shows them, the token hidden.
    name.sendKeys(Keys.BACK_SPACE, "v1.2");
    replicas.sendKeys(Keys.BACK_SPACE, "3");
    field(card, "region").findElements(By.cssSelector(".q-check")).get(1).click();
    field(card, "notify").findElement(By.cssSelector(".q-check")).click();
    token.sendKeys(TOKEN);
    button(card, "Submit").click();
    WebElement ended = awaitEnded();
    JsonObject answer = report().getJsonObject("answer");
    assertEquals("accept", answer.getString("action"), answer.encode());
    JsonObject content = answer.getJsonObject("content");
    assertEquals("v1.2", content.getString("name"));
    assertInstanceOf(Number.class, content.getValue("replicas"), "replicas a JSON number: " + content.encode());
    assertEquals(3, content.getInteger("replicas"));
    assertEquals("us", content.getString("region"));
    assertEquals(Boolean.TRUE, content.getValue("notify"));
    // The agent got the secret (it writes only its length, its reply being kept in the transcript).
    assertEquals("received " + TOKEN.length() + " characters", content.getString("token"));
    List<JsonObject> sent = answersSent();
    assertEquals(1, sent.size(), sent.toString());
    assertEquals("accept", sent.get(0).getString("optionId"));
    assertEquals(3, sent.get(0).getJsonObject("content").getValue("replicas"), "sent as a number");
    List<String> shown = List.of("Release name: v1.2", "Replicas: 3", "Region: America", "Notify the team: Yes",
        "Deploy token: hidden");
    assertAnswered(ended, shown);
    screenshot("form-answered");

    // A reload draws it again from history alone: the question, the answer, never the token, and the
    // card where it was asked (before the reply the agent wrote after it, though a replay sends it last).
    browser.navigate().refresh();
    assertAnswered(awaitEnded(), shown);
    assertAskedBeforeTheReport(awaitEnded());
    // A gateway restart on the same data directory: the same again.
    gateway.close();
    gateway = new GatewayHarness(vertx, settings, Gateway.Tuning.DEFAULT);
    browser.get(gateway.url("/")); // the new port; the session (cookie) survived the restart
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
    assertAnswered(awaitEnded(), shown);
    assertAskedBeforeTheReport(awaitEnded());
    screenshot("form-after-restart");
  }

  private void assertAskedBeforeTheReport(WebElement card) {
    WebElement reply = waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .filter(m -> m.getDomProperty("textContent").contains("REPORT:")).findFirst().orElse(null));
    assertEquals(Boolean.TRUE, script("return !!(arguments[0].compareDocumentPosition(arguments[1])"
        + " & Node.DOCUMENT_POSITION_FOLLOWING)", card, reply), "the question comes before the reply to it");
  }

  /** An ended form's card: its message, the answer as {@code rows}, "Answered — by web", and no trace of the token. */
  private void assertAnswered(WebElement card, List<String> rows) {
    assertEquals("How should I deploy?", card.findElement(By.cssSelector(".question-message")).getText());
    assertEquals(rows, answerRows(card));
    String verdict = card.findElement(By.cssSelector(".verdict")).getText();
    assertTrue(verdict.startsWith("Answered — by web at "), verdict);
    assertFalse(card.getDomProperty("textContent").contains(TOKEN), "never the token: " + card.getText());
    assertFalse(card.getDomProperty("innerHTML").contains(TOKEN), "not even out of sight");
    assertTrue(card.findElements(By.cssSelector("input, select, .options button")).isEmpty(), "read-only once ended");
  }

  @Test
  void aFormAtDesktopSizeFitsTheChatColumnAndTheGatewaysRefusalIsSaidBesideItsField() throws Exception {
    browser.manage().window().setSize(new Dimension(1280, 900));
    logIn();
    askAgent("form");
    WebElement card = awaitQuestion();
    WebElement form = card.findElement(By.cssSelector(".question-form"));
    assertEquals(Boolean.TRUE, script("const f = arguments[0].getBoundingClientRect(),"
        + " l = document.getElementById('log').getBoundingClientRect();"
        + " return f.left >= l.left && f.right <= l.right && f.width <= 800;", form), "inside the chat column");
    assertFits(card);
    screenshot("desktop-form");

    // The gateway checks again: an answer the page would not send, put on its socket as it is, is
    // refused, and the refusal is said beside the field it names; what was typed stays.
    WebElement name = field(card, "name").findElement(By.tagName("input"));
    name.sendKeys("kept as typed");
    String requestId = card.getDomAttribute("data-request-id");
    page.async("const done = arguments[arguments.length - 1]; import('/js/socket.js').then(m => done(m.send("
        + "{type: 'permission_answer', requestId: arguments[0], optionId: 'accept', content: {name: 'x', region: 'eu'}})));",
        requestId);
    WebElement error = waiting().until(d -> {
      WebElement e = card.findElement(By.cssSelector(".question-error"));
      return e.getText().isEmpty() ? null : e;
    });
    assertTrue(error.getText().startsWith("Not taken: "), error.getText());
    assertTrue(error.getText().contains("(name)"), "the gateway names the field: " + error.getText());
    String beside = field(card, "name").findElement(By.cssSelector(".q-error")).getText();
    assertTrue(beside.contains("(name)"), "beside the field: " + beside);
    assertTrue(page.inView(error), "said where the person looks");
    assertEquals("kept as typed", name.getDomProperty("value"));
    assertFalse(card.getDomAttribute("class").contains("resolved"), "the card still waits");
    assertTrue(button(card, "Submit").isEnabled(), "and can be answered");
    screenshot("desktop-refused");

    // Corrected, with Enter in a field as a form submits: the answer goes, optional fields left out.
    field(card, "region").findElements(By.cssSelector(".q-check")).get(0).click();
    name.sendKeys(Keys.ENTER);
    WebElement ended = awaitEnded();
    JsonObject content = report().getJsonObject("answer").getJsonObject("content");
    assertEquals(new JsonObject().put("name", "kept as typed").put("replicas", 2).put("region", "eu").put("notify", false),
        content, "the default replicas, notify false, no token");
    assertEquals(List.of("Release name: kept as typed", "Replicas: 2", "Region: Europe", "Notify the team: No"),
        answerRows(ended));
  }

  @Test
  void aLinkShowsItsHostAndOpenAnswersAccept() throws Exception {
    logIn();
    // Open would open a tab: the page's window.open is kept instead, with what it was given.
    script("window.opened = []; window.open = (...args) => { window.opened.push(args); return null; };");
    askAgent("link");
    WebElement card = awaitQuestion();
    assertEquals("Sign in to the registry", card.findElement(By.cssSelector(".question-message")).getText());
    WebElement domain = card.findElement(By.cssSelector(".question-domain"));
    assertEquals("Opens auth.example.com", domain.getText());
    assertTrue(page.inView(domain), "the host shows");
    assertTrue(fontPx(domain) > fontPx(card.findElement(By.cssSelector(".question-message"))), "plainly, prominently");
    WebElement url = card.findElement(By.cssSelector(".question-url"));
    assertEquals(URL, url.getText());
    assertTrue(fontPx(url) < fontPx(domain), "the whole URL small, under it");
    assertTrue(card.findElements(By.cssSelector("a")).isEmpty(), "never a live link");
    assertEquals(List.of("Open auth.example.com", "Decline", "Cancel"), buttonNames(card));
    for (WebElement b : card.findElements(By.cssSelector(".options button"))) {
      assertTrue(page.inView(b) && b.getSize().getHeight() >= 44, "a 44px target on screen: " + b.getText());
    }
    screenshot("link");

    button(card, "Open auth.example.com").click();
    WebElement ended = awaitEnded();
    assertEquals(new JsonObject().put("action", "accept"), report().getJsonObject("answer"));
    assertEquals(List.of(List.of(URL, "_blank", "noopener,noreferrer")), script("return window.opened;"),
        "opened in a new tab that cannot reach back");
    String verdict = ended.findElement(By.cssSelector(".verdict")).getText();
    assertTrue(verdict.startsWith("Opened auth.example.com — by web at "), verdict);
    assertTrue(ended.findElements(By.cssSelector(".options button")).isEmpty(), "nothing left to press");
    assertEquals("Opens auth.example.com", ended.findElement(By.cssSelector(".question-domain")).getText(),
        "what was asked stays");
    screenshot("link-opened");
  }

  @Test
  void aChoiceDeclinedTellsTheAgentDecline() throws Exception {
    logIn();
    askAgent("choice");
    WebElement card = awaitQuestion();
    assertEquals("Which colour?", card.findElement(By.cssSelector(".question-message")).getText());
    assertEquals(List.of("red", "green"), field(card, "colour").findElements(By.cssSelector(".q-check")).stream()
        .map(WebElement::getText).toList());
    assertEquals(List.of("Submit", "Decline", "Cancel"), buttonNames(card), "accept:red and accept:green stay in chats");
    button(card, "Decline").click();
    WebElement ended = awaitEnded();
    assertEquals(new JsonObject().put("action", "decline"), report().getJsonObject("answer"));
    List<JsonObject> sent = answersSent();
    assertEquals(List.of(new JsonObject().put("type", "permission_answer").put("requestId",
        ended.getDomAttribute("data-request-id")).put("optionId", "decline")), sent, "no content with a decline");
    String verdict = ended.findElement(By.cssSelector(".verdict")).getText();
    assertTrue(verdict.startsWith("Declined — by web at "), verdict);
    assertEquals(List.of(), answerRows(ended));
    assertTrue(ended.findElements(By.cssSelector("input")).isEmpty(), "read-only once ended");
  }

  /** A question the agent takes back ($/cancel_request) ends on the page as withdrawn, read-only, at phone size. */
  @Test
  void aQuestionTheAgentWithdrawsIsShownWithdrawn() throws Exception {
    logIn();
    askAgent("withdraw");
    WebElement ended = awaitEnded();
    String verdict = ended.findElement(By.cssSelector(".verdict")).getText();
    assertTrue(verdict.startsWith("Cancelled: the agent withdrew its question"), verdict);
    assertTrue(page.inView(ended.findElement(By.cssSelector(".verdict"))) || (Boolean) script(
        "arguments[0].scrollIntoView({block: 'center'}); const r = arguments[0].getBoundingClientRect();"
        + "return r.top >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;",
        ended.findElement(By.cssSelector(".verdict"))), "the verdict shows at phone size");
    assertTrue(ended.findElements(By.cssSelector("input")).isEmpty(), "read-only once ended");
    assertTrue(answersSent().isEmpty(), "nobody answered it");
    assertEquals(new JsonObject().put("action", "cancel"), report().getJsonObject("answer"));
    screenshot("withdrawn");
  }
}
