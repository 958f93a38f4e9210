package io.switchboard.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.config.AgentSpec;
import io.switchboard.testkit.Chromium;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.WebElement;

/**
 * What agents cost and the logins they demand, as the page shows them in Debian's Chromium (headless)
 * against the whole gateway at phone size (390x844), with the scripted Node agent
 * (src/test/badpeers/bad-agent.js): the Usage view sums what it reported (0.50, 1.00, then 0.20 of a
 * new session: 1.20 USD) for today and for the 30 days; a login demand shows its command line with a
 * Copy button, and Try again sends the last message again. Screenshots go to target/screenshots.
 */
@ExtendWith(VertxExtension.class)
class BrowserUsageTest extends BrowserClass {
  static final Path SCRIPT = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();
  static final String NAME = "Bad agent";

  @TempDir
  Path root;
  GatewayHarness gateway;
  /** What the store kept of the agent's cost reports (the page asks the store). */
  final AtomicInteger costsKept = new AtomicInteger();

  @BeforeEach
  void start(Vertx vertx, TestInfo info) throws Exception {
    String mode = testName.startsWith("aLogin") ? "auth" : testName.startsWith("anAgent") ? "lifecycle" : "cost";
    Path dir = Files.createDirectories(root.resolve(testName));
    // Unconfined, to write the methods it is sent beside its data directory (lifecycle mode).
    AgentSpec bad = new AgentSpec("bad", NAME, null, List.of("node", SCRIPT.toString(), mode),
        Map.of("BAD_AGENT_LOG", dir.resolve("methods.log").toString()), null, null,
        io.switchboard.process.Sandbox.Mode.NONE);
    AgentSpec plain = new AgentSpec("plain", "Plain agent", null, List.of("node", SCRIPT.toString(), "cost"), Map.of(),
        null, null);
    costsKept.set(0);
    vertx.eventBus().<JsonObject>consumer(Addresses.USAGE_COST, m -> costsKept.incrementAndGet());
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), bad, plain);
    browser.manage().window().setSize(new Dimension(390, 844));
  }

  @AfterEach
  void stop() {
    page.forget();
    gateway.close();
  }

  private String origin() {
    return "http://127.0.0.1:" + gateway.port;
  }

  /** Logs in and starts a thread of the bad agent from the phone menu. */
  private void startThread() {
    page.logIn(origin() + "/", gateway.token);
    page.openMenu();
    browser.findElement(By.cssSelector("#new-thread button")).click();
    page.waiting().until(d -> d.findElement(By.id("input")).isEnabled()
        && d.findElements(By.cssSelector("#threads li")).size() == 1);
  }

  /** "name = amount" of the line of {@code list} for {@code agentId} (null: a total) and {@code currency}; null when none. */
  private String amount(WebElement list, String agentId, String currency) {
    String who = agentId == null ? ":not([data-agent-id])" : "[data-agent-id='" + agentId + "']";
    return list.findElements(By.cssSelector(".usage-line" + who + "[data-currency='" + currency + "']")).stream().findFirst().map(e -> e.findElement(By.cssSelector(".usage-who")).getText() + " = "
        + e.findElement(By.cssSelector(".usage-amount")).getText()).orElse(null);
  }

  private String today() {
    return (String) page.script("const d = new Date(); const two = (n) => String(n).padStart(2, '0');"
        + "return d.getFullYear() + '-' + two(d.getMonth() + 1) + '-' + two(d.getDate());");
  }

  @Test
  void theUsageViewSumsWhatTheAgentReportedPerDayAndForThirtyDays() throws Exception {
    startThread();
    for (int i = 1; i <= 3; i++) {
      page.say("turn " + i);
      // Each reply reports the session's cost with its context window: the bar above the log says "i k / 200k".
      String used = i + "k / 200k tokens";
      page.waiting().until(d -> d.findElement(By.id("usage")).getDomProperty("textContent").startsWith(used)
          && !d.findElement(By.id("busy")).isDisplayed());
    }
    page.waiting().until(d -> costsKept.get() == 3); // the store kept each report

    page.openMenu();
    WebElement open = browser.findElement(By.id("usage-open"));
    assertEquals("Usage", open.getText());
    open.click();
    WebElement view = page.waiting().until(d -> d.findElement(By.id("usage-view")).isDisplayed()
        ? d.findElement(By.id("usage-view")) : null);
    page.waiting().until(d -> !d.findElements(By.cssSelector("#usage-days .usage-day")).isEmpty());
    assertEquals("Usage", browser.findElement(By.id("thread-title")).getText());
    assertFalse(browser.findElement(By.id("log")).isDisplayed(), "in place of the thread");
    assertFalse(browser.findElement(By.id("composer")).isDisplayed());
    assertFalse(browser.findElement(By.id("app")).getDomAttribute("class").contains("menu-open"), "the menu closed");

    WebElement totals = browser.findElement(By.id("usage-totals"));
    assertTrue(totals.getText().startsWith("Last 30 days"), totals.getText());
    assertEquals(NAME + " = 1.20 USD", amount(totals, "bad", "USD"), "0.50 + 0.50 more + 0.20 of a new session");
    List<WebElement> days = browser.findElements(By.cssSelector("#usage-days .usage-day"));
    assertEquals(1, days.size(), "one day reported");
    WebElement day = days.get(0);
    assertEquals(today(), day.getDomAttribute("data-day"));
    assertEquals("Today", day.findElement(By.cssSelector(".usage-day-head")).getText());
    assertEquals(NAME + " = 1.20 USD", amount(day.findElement(By.cssSelector(".usage-lines:not(.usage-day-total)")),
        "bad", "USD"));
    assertEquals("Total = 1.20 USD", amount(day.findElement(By.cssSelector(".usage-day-total")), null, "USD"));

    // Everything a person needs is on the phone's screen, nothing scrolls sideways.
    for (WebElement e : List.of(browser.findElement(By.id("usage-refresh")), totals, day)) {
      assertTrue(page.inView(e), "inside the viewport: " + e.getText());
    }
    assertTrue(browser.findElement(By.id("usage-refresh")).getSize().getHeight() >= 44, "a 44 px target");
    assertEquals(Boolean.FALSE, page.script("const v = arguments[0]; return v.scrollWidth > v.clientWidth;", view),
        "no sideways scrolling");
    screenshot("usage-view");

    // Refresh asks again and draws the same; a thread opened from the menu leaves the view.
    browser.findElement(By.id("usage-refresh")).click();
    page.waiting().until(d -> d.findElement(By.id("usage-note")).getText().isEmpty()
        && (NAME + " = 1.20 USD").equals(amount(d.findElement(By.id("usage-totals")), "bad", "USD")));
    page.openMenu();
    browser.findElements(By.cssSelector("#threads button")).get(0).click();
    page.waiting().until(d -> !d.findElement(By.id("usage-view")).isDisplayed() && d.findElement(By.id("input"))
        .isDisplayed());
  }

  @Test
  void theUsageViewSaysWhatShowsThereWhenNothingWasReported() throws Exception {
    page.logIn(origin() + "/", gateway.token);
    page.openMenu();
    browser.findElement(By.id("usage-open")).click();
    WebElement empty = page.waiting().until(d -> d.findElements(By.cssSelector("#usage-days .usage-empty")).stream()
        .findFirst().orElse(null));
    assertTrue(empty.getText().contains("Agents that report what they cost (ACP usage_update) will show here."),
        empty.getText());
    assertFalse(browser.findElement(By.id("usage-totals")).isDisplayed(), "no totals of nothing");
    assertTrue(page.inView(empty));
  }

  @Test
  void aLoginDemandShowsItsCommandToCopyAndTryAgainSendsTheMessageAgain() throws Exception {
    startThread();
    page.say("hello");
    WebElement help = page.waiting().until(d -> d.findElements(By.cssSelector(".msg.system.error .login-help")).stream()
        .findFirst().orElse(null));
    page.waiting().until(d -> !d.findElement(By.id("busy")).isDisplayed());
    WebElement code = help.findElement(By.cssSelector(".login-entry code.login-command"));
    String command = code.getText();
    assertTrue(command.contains("BAD_AUTH_MODE='device code' node "), command);
    assertTrue(command.endsWith(" auth --login"), command);
    assertEquals("BAD_AUTH_MODE='device code' node " + SCRIPT + " auth --login", code.getDomProperty("textContent"),
        "the exact command line, whole");
    assertEquals("Log in", help.findElement(By.cssSelector(".login-entry .login-name")).getText());
    assertEquals(1, help.findElements(By.cssSelector(".login-entry")).size(), "one terminal login offered");
    WebElement copy = help.findElement(By.cssSelector(".login-entry button.login-copy"));
    WebElement again = help.findElement(By.cssSelector("button.try-again"));
    assertEquals("Copy", copy.getText());
    assertTrue(page.inView(copy), "the Copy button shows at phone size");
    assertTrue(page.inView(again), "Try again shows at phone size");
    assertTrue(page.inView(code), "the command line wraps inside the phone's width");
    assertEquals(Boolean.FALSE, page.script("const c = arguments[0]; return c.scrollWidth > c.clientWidth;", code),
        "the command wraps, nothing hidden to its right");
    screenshot("login");

    // Copy: with the clipboard allowed, the button says it copied (else the page selects the command).
    browser.executeCdpCommand("Browser.setPermission", Map.of("permission", Map.of("name", "clipboard-write"),
        "setting", "granted", "origin", origin()));
    browser.executeCdpCommand("Browser.setPermission", Map.of("permission", Map.of("name", "clipboard-read"),
        "setting", "granted", "origin", origin()));
    copy.click();
    String said = page.waiting().until(d -> "Copied".equals(copy.getText()) ? "Copied"
        : help.findElement(By.cssSelector(".login-note")).getText().startsWith("Select and copy it") ? "fallback" : null);
    if (said.equals("Copied")) {
      Object clipboard = page.async("const done = arguments[arguments.length - 1];"
          + "navigator.clipboard.readText().then(done, (e) => done('unreadable: ' + e));");
      assertEquals(code.getDomProperty("textContent"), clipboard, "what was copied is the command line");
      // And back to "Copy" after a moment, ready for another copy.
      page.waiting().until(d -> "Copy".equals(copy.getText()));
    } else {
      assertEquals(code.getDomProperty("textContent"), page.script("return String(window.getSelection())"),
          "the command is selected to copy by hand");
    }
    screenshot("copied-" + said);

    // Try again sends "hello" again: a second turn, failing the same way.
    again.click();
    page.waiting().until(d -> d.findElements(By.cssSelector(".msg.system.error .login-help")).size() == 2);
    assertEquals(List.of("hello", "hello"), browser.findElements(By.cssSelector("#log .msg.user")).stream()
        .map(WebElement::getText).toList(), "the person's message, sent again");
    assertFalse(again.isEnabled(), "sent once");
    WebElement second = browser.findElements(By.cssSelector(".msg.system.error .login-help")).get(1);
    assertTrue(second.findElement(By.cssSelector("button.try-again")).isDisplayed(), "the new error can try again too");
  }

  /** The menu's Agent accounts: an agent that offers logout is logged out; one that does not says so. */
  @Test
  void anAgentIsLoggedOutFromTheMenuAndOneWithoutLogoutSaysSo() throws Exception {
    page.logIn(origin() + "/", gateway.token);
    page.openMenu();
    WebElement accounts = browser.findElement(By.cssSelector("#accounts summary"));
    accounts.click();
    WebElement bad = page.waiting().until(d -> d.findElement(By.cssSelector("#accounts-list button[data-agent-id='bad']")));
    ((org.openqa.selenium.JavascriptExecutor) browser).executeScript("arguments[0].scrollIntoView({block: 'center'})", bad);
    assertTrue(page.inView(bad), "the Log out button shows at phone size: " + page.script(
        "const r = arguments[0].getBoundingClientRect(); return JSON.stringify([r.top, r.bottom, r.left, r.right, "
        + "window.innerWidth, window.innerHeight])", bad));
    assertEquals("Log out of " + NAME, bad.getDomAttribute("aria-label"));
    bad.click();
    WebElement note = browser.findElement(By.id("accounts-note"));
    page.waiting().until(d -> ("Logged out of " + NAME + ".").equals(note.getText()));
    assertTrue(Files.readAllLines(root.resolve(testName).resolve("methods.log")).contains("logout "),
        "the agent was asked to log out");
    screenshot("logged-out");
    browser.findElement(By.cssSelector("#accounts-list button[data-agent-id='plain']")).click();
    page.waiting().until(d -> note.getText().equals("Plain agent offers no logout here: log out with its own command line."));
  }
}
