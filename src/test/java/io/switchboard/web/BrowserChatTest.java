package io.switchboard.web;

import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.bus.Addresses;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The chat page in a real browser: Debian's Chromium, headless, driven by Selenium through
 * Debian's chromedriver, against the whole gateway with the built-in demo agent. Screenshots go to
 * target/screenshots.
 */
class BrowserChatTest extends BrowserGatewayClass {
  @Test
  void aWholeConversationWithAnApprovedEdit() throws Exception {
    logIn();
    screenshot("1-logged-in");
    String t = startThread();
    say("please remember to water the plants");
    waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .anyMatch(m -> m.getText().contains("water the plants")));
    WebElement card = awaitCard();
    assertTrue(card.getText().contains("demo-notes.md"), card.getText());
    assertFalse(card.findElements(By.cssSelector(".diff .add")).isEmpty(), "the card shows the diff");
    assertTrue(browser.findElement(By.id("busy")).isDisplayed());
    assertTrue(browser.findElement(By.id("plan")).isDisplayed());
    // A screen reader hears the question once, not every chunk: the log is not a live region.
    waiting().until(d -> d.findElement(By.id("announce")).getDomProperty("textContent")
        .startsWith("Demo agent asks your permission: Add a note to demo-notes.md"));
    assertEquals(null, browser.findElement(By.id("log")).getDomAttribute("aria-live"));
    screenshot("2-card");
    remindedWhileWaiting();
    click(card, "Allow once");
    assertTrue(verdict().contains("answered by web"));
    waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .anyMatch(m -> m.getText().contains("Done")));
    waiting().until(d -> !d.findElement(By.id("busy")).isDisplayed());
    assertTrue(Files.readString(gateway.workspace(t).resolve("demo-notes.md")).contains("water the plants"));
    // The agent's context window, as it reports it (usage_update).
    waiting().until(d -> "1k / 200k tokens".equals(d.findElement(By.id("usage")).getText()));
    // The sidebar says how many agent processes run, of how many allowed, and what they take.
    String pool = waiting().until(d -> {
      WebElement p = d.findElement(By.id("agent-pool"));
      return p.isDisplayed() && p.getText().startsWith("Agents: 1 running of ") ? p.getText() : null;
    });
    assertTrue(pool.matches("Agents: 1 running of \\d+, \\d+ MiB"), pool);
    assertTrue((Boolean) ((JavascriptExecutor) browser).executeScript("const r = document.getElementById('agent-pool')"
        + ".getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight && r.left >= 0 "
        + "&& r.right <= window.innerWidth;"), "the agent status is inside the window");
    screenshot("3-done");
    // The audit view lists the request, how it ended, who answered and where.
    browser.findElement(By.id("audit-open")).click();
    auditShowsTheAnsweredReminder();
    screenshot("4-audit");
    // From the audit, straight to the thread it was asked in.
    browser.findElement(By.cssSelector("#audit-list li button.link")).click();
    waiting().until(d -> d.findElement(By.id("log")).isDisplayed() && !d.findElement(By.id("audit")).isDisplayed());
    assertTrue(browser.findElement(By.id("thread-title")).getText().contains("water the plants"));
  }

  /** A reminder written to the ledger while the card waits (as the attention plan would, minutes later). */
  private void remindedWhileWaiting() throws Exception {
    String requestId = gateway.vertx.eventBus().<JsonObject>request(Addresses.STORE_LEDGER_LIST, new JsonObject()
            .put("state", "pending").put("limit", 1)).await(20, TimeUnit.SECONDS).body().getJsonArray("requests")
        .getJsonObject(0).getString("requestId");
    gateway.vertx.eventBus().request(Addresses.STORE_LEDGER_ATTEND, new JsonObject().put("requestId", requestId)
        .put("step", "remind").put("at", System.currentTimeMillis()).put("text", "Still waiting"))
        .await(20, TimeUnit.SECONDS);
  }

  /** The audit view's newest entry, on screen: the request, who answered, and the reminder that went out while it waited. */
  private void auditShowsTheAnsweredReminder() {
    WebElement item = waiting().until(d -> {
      List<WebElement> items = d.findElements(By.cssSelector("#audit-list li"));
      return items.isEmpty() || !items.get(0).isDisplayed() ? null : items.get(0);
    });
    String audit = item.getText();
    assertTrue(audit.contains("Add a note to demo-notes.md"), audit);
    assertTrue(audit.contains("Allow once (allow_once) — answered by web"), audit);
    assertTrue(java.util.regex.Pattern.compile("\\breminded \\d\\d:\\d\\d\\b").matcher(audit).find(),
        "the audit shows what reached people while it waited: " + audit);
    WebElement steps = item.findElements(By.xpath(".//*[contains(text(), 'reminded')]")).stream().findFirst()
        .orElse(item);
    assertTrue(inWindow(steps), "the reminder line is inside the window: " + audit);
  }

  @Test
  void theRejectPath() throws Exception {
    logIn();
    String t = startThread();
    say("do not touch my files");
    click(awaitCard(), "Reject");
    assertTrue(verdict().startsWith("Reject"));
    waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .anyMatch(m -> m.getText().contains("as it was")));
    assertFalse(Files.exists(gateway.workspace(t).resolve("demo-notes.md")));
    screenshot("rejected");
  }

  @Test
  void reloadWhileACardIsPendingThenAnswer() throws Exception {
    logIn();
    String t = startThread();
    say("survive a reload");
    awaitCard();
    browser.navigate().refresh();
    // The session cookie survives the reload; the page resumes the thread and shows the card again.
    WebElement card = awaitCard();
    assertTrue(card.getText().contains("demo-notes.md"));
    screenshot("after-reload");
    click(card, "Allow once");
    verdict();
    waitFor(() -> Files.exists(gateway.workspace(t).resolve("demo-notes.md")), "the file to be written");
  }

  @Test
  void agentTextWithScriptAndOnerrorRendersInert() throws Exception {
    logIn();
    startThread();
    say("<img src=x onerror=\"document.title='pwned'\"> <script>document.title='pwned too'</script> **bold**");
    awaitCard();
    WebElement reply = browser.findElements(By.cssSelector(".msg.agent")).get(0);
    // The title counts waiting questions from a frame sent a moment after the card: wait for it, then
    // give a would-be onerror handler its chance to run, and look again.
    waiting().until(d -> "(1) Switchboard".equals(d.getTitle()));
    Thread.sleep(300);
    assertEquals("(1) Switchboard", browser.getTitle(), "the page's own title: one question waits");
    Object handlers = ((JavascriptExecutor) browser).executeScript(
        "return document.querySelectorAll('[onerror], script:not([src]):not([type=importmap])').length");
    assertEquals(0L, handlers);
    assertFalse(reply.findElements(By.tagName("strong")).isEmpty(), "Markdown still renders");
    screenshot("inert");
  }

  @Test
  void agentTextCannotForgeTheComposerACardOrTheToast() throws Exception {
    logIn();
    startThread();
    say("<textarea id=\"input\" name=\"input\" hidden>forged prompt</textarea>"
        + "<div class=\"card\" id=\"toast\">Fake card <button class=\"allow\">Allow once</button></div> **ok**");
    WebElement card = awaitCard();
    WebElement reply = browser.findElements(By.cssSelector(".msg.agent")).get(0);
    assertTrue(reply.findElements(By.cssSelector("textarea, button, input, form, [id], [name], [class]")).isEmpty(),
        reply.getAttribute("innerHTML"));
    assertEquals(1L, ((JavascriptExecutor) browser).executeScript(
        "return document.querySelectorAll('#input').length"), "one composer");
    assertEquals(1, browser.findElements(By.cssSelector(".card")).size(), "only the real card looks like a card");
    click(card, "Allow once");
    verdict();
    awaitIdle();
    // What the person types is what is sent.
    say("my own words");
    waiting().until(d -> d.findElements(By.cssSelector(".msg.user")).stream()
        .anyMatch(m -> m.getText().equals("my own words")));
    List<WebElement> sent = browser.findElements(By.cssSelector(".msg.user"));
    assertEquals("my own words", sent.get(sent.size() - 1).getText(), "the composer sent the person's text");
    assertEquals(2, sent.size());
  }


  private void manyTurnsThenAQuestionStayOnScreen(int width, int height) throws Exception {
    browser.manage().window().setSize(new Dimension(width, height));
    logIn();
    if (width < 760) {
      browser.findElement(By.id("menu")).click();
      waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
      browser.findElement(By.cssSelector("#new-thread button")).click();
      waiting().until(d -> d.findElement(By.id("input")).isEnabled());
    } else {
      startThread();
    }
    for (int i = 1; i <= 3; i++) {
      say("note number " + i + " with a few more words so that each turn takes some room on the screen");
      WebElement card = awaitCard();
      assertTrue(inWindow(card.findElement(By.cssSelector(".options button"))), "turn " + i + ": the card's buttons");
      assertTrue(inWindow(browser.findElement(By.id("input"))), "turn " + i + ": the composer");
      click(card, "Allow once");
      verdict();
      awaitIdle();
    }
    long pageHeight = (Long) ((JavascriptExecutor) browser).executeScript(
        "return document.documentElement.scrollHeight - window.innerHeight");
    assertTrue(pageHeight <= 0, "the page itself does not grow: " + pageHeight);
    screenshot("after-three-turns");
    // After a reload: every answered card is back, with what was chosen and by whom, and the page
    // lands at the end of the thread with the composer on screen.
    browser.navigate().refresh();
    waiting().until(d -> d.findElements(By.cssSelector(".card.resolved")).size() == 3);
    List<WebElement> verdicts = browser.findElements(By.cssSelector(".card.resolved .verdict"));
    assertTrue(verdicts.stream().allMatch(v -> v.getText().startsWith("Allow once — answered by web")),
        verdicts.stream().map(WebElement::getText).toList().toString());
    assertEquals(3, browser.findElements(By.cssSelector(".card.resolved .options button.chosen")).size());
    assertEquals(3, browser.findElements(By.cssSelector(".tool")).size(), "one box per tool call, the card inside");
    // Landed at the end of the thread (its last message on screen), not at its top.
    try {
      waiting().until(d -> (Boolean) ((JavascriptExecutor) d).executeScript("const l = document.getElementById('log');"
          + " return l.scrollHeight - l.scrollTop - l.clientHeight < 2;"));
    } catch (org.openqa.selenium.TimeoutException e) {
      screenshot("not-at-end");
      throw new AssertionError("not at the end: " + ((JavascriptExecutor) browser).executeScript(
          "const l = document.getElementById('log'); return [l.scrollHeight, l.scrollTop, l.clientHeight,"
              + " [...l.children].slice(-4).map(c => c.className + ':' + c.offsetTop + '+' + c.offsetHeight).join(' | ')];"), e);
    }
    List<WebElement> messages = browser.findElements(By.cssSelector(".msg.agent"));
    assertTrue(inWindow(messages.get(messages.size() - 1)), "the last reply is on screen");
    assertTrue(inWindow(browser.findElement(By.id("input"))));
    screenshot("after-reload");
  }

  @Test
  void severalTurnsAtPhoneSizeKeepTheCardAndComposerOnScreenAndHistoryAfterReload() throws Exception {
    manyTurnsThenAQuestionStayOnScreen(390, 844);
  }

  @Test
  void severalTurnsAtDesktopSizeKeepTheCardAndComposerOnScreenAndHistoryAfterReload() throws Exception {
    manyTurnsThenAQuestionStayOnScreen(1440, 900);
  }

  @Test
  void answeredCardsSurviveAGatewayRestart(Vertx vertx) throws Exception {
    logIn();
    startThread();
    say("remember this across a restart");
    WebElement card = awaitCard();
    click(card, "Allow once");
    verdict();
    awaitIdle();
    gateway.close();
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), AgentHarness.demo());
    browser.get(gateway.url("/")); // the new port; the session (cookie) survived the restart
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
    String verdict = waiting().until(d -> {
      List<WebElement> v = d.findElements(By.cssSelector(".card.resolved .verdict"));
      return v.isEmpty() ? null : v.get(0).getText();
    });
    assertTrue(verdict.startsWith("Allow once — answered by web"), verdict);
    assertTrue(browser.findElements(By.cssSelector(".msg.user")).stream()
        .anyMatch(m -> m.getText().contains("remember this across a restart")));
    screenshot("after-restart");
  }

  @Test
  void anotherTabsThreadAndItsWaitingQuestionShowWithoutAReload() throws Exception {
    logIn();
    String first = browser.getWindowHandle();
    browser.switchTo().newWindow(org.openqa.selenium.WindowType.TAB);
    browser.get(gateway.url("/"));
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
    startThread();
    say("asked from the other tab");
    awaitCard();
    browser.switchTo().window(first);
    // The first tab lists the thread, with a badge for its waiting question, and counts it in its title.
    WebElement badge = waiting().until(d -> {
      List<WebElement> b = d.findElements(By.cssSelector(".threads .pending"));
      return b.isEmpty() ? null : b.get(0);
    });
    assertEquals("1", badge.getText());
    assertTrue(inWindow(badge), "the badge is visible");
    waiting().until(d -> d.getTitle().equals("(1) Switchboard"));
    assertTrue(browser.findElements(By.cssSelector(".threads .title")).stream()
        .anyMatch(t -> t.getText().contains("asked from the other tab")), "the thread, titled by its prompt");
    screenshot("badge");
    // Answered in the other tab: the badge and the count go.
    for (String handle : browser.getWindowHandles()) {
      if (!handle.equals(first)) {
        browser.switchTo().window(handle);
      }
    }
    click(browser.findElement(By.cssSelector(".card:not(.resolved)")), "Allow once");
    verdict();
    browser.switchTo().window(first);
    waiting().until(d -> d.findElements(By.cssSelector(".threads .pending")).isEmpty()
        && d.getTitle().equals("Switchboard"));
  }

  @Test
  void aCommandCardSaysWhatRunsWhoAsksAndAStoppedOneSaysWhyInWords() throws Exception {
    logIn();
    startThread();
    say("run: ls -la");
    WebElement card = awaitCard();
    assertTrue(card.getText().contains("Demo agent asks your permission"), card.getText());
    assertEquals("ls -la", card.findElement(By.cssSelector(".permission .command code")).getText());
    WebElement always = card.findElement(By.cssSelector(".options button.allow_always"));
    assertTrue(always.getDomAttribute("title").contains("rest of this session"), "always is explained");
    assertTrue(always.getSize().getHeight() >= 44, "a 44 px target: " + always.getSize());
    browser.findElement(By.id("stop")).click();
    String verdict = verdict();
    assertTrue(verdict.startsWith("Cancelled: the turn was stopped"), verdict);
    screenshot("stopped");
  }

  @Test
  void aQuestionCanBeAnsweredFromTheKeyboard() throws Exception {
    logIn();
    startThread();
    say("answer me with a key");
    WebElement card = awaitCard();
    assertTrue(card.getText().contains("Keys: Alt+1…Alt+3"), card.getText());
    assertEquals("Alt+3", card.findElements(By.cssSelector(".options button")).get(2).getDomAttribute("aria-keyshortcuts"));
    // Focus stays in the composer; Alt+3 is the third option, Reject.
    new org.openqa.selenium.interactions.Actions(browser).keyDown(Keys.ALT).sendKeys("3").keyUp(Keys.ALT).perform();
    String verdict = verdict();
    assertTrue(verdict.startsWith("Reject — answered by web"), verdict);
  }

  @Test
  void aCommandsOutputShowsInItsToolCall() throws Exception {
    logIn();
    startThread();
    say("run: echo hello-from-the-terminal");
    click(awaitCard(), "Allow once");
    verdict();
    // Read inside the wait: the page may redraw the tool box as the agent updates it.
    String output = waiting().until(d -> {
      List<WebElement> pre = d.findElements(By.cssSelector(".tool pre.terminal"));
      return pre.isEmpty() ? null : pre.get(0).getText();
    });
    assertTrue(output.contains("hello-from-the-terminal"), output);
    assertEquals("Exit code 0", waiting().until(d -> d.findElement(By.cssSelector(".tool .exit")).getText()));
    screenshot("terminal");
  }

  @Test
  void thePhoneMenuClosesWithEscapeOrATapOutsideAndLeavesTheTabOrderWhenClosed() throws Exception {
    browser.manage().window().setSize(new Dimension(390, 844));
    logIn();
    JavascriptExecutor js = (JavascriptExecutor) browser;
    assertEquals(Boolean.TRUE, js.executeScript("return document.getElementById('sidebar').inert"),
        "closed, the menu's controls are out of reach");
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
    assertEquals(Boolean.FALSE, js.executeScript("return document.getElementById('sidebar').inert"));
    new org.openqa.selenium.interactions.Actions(browser).sendKeys(Keys.ESCAPE).perform();
    waiting().until(d -> Boolean.TRUE.equals(js.executeScript("return document.getElementById('sidebar').inert")));
    waiting().until(d -> !inWindow(d.findElement(By.cssSelector("#new-thread button"))));
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> inWindow(d.findElement(By.cssSelector("#new-thread button"))));
    // A tap on the dimmed chat beside the menu closes it.
    new org.openqa.selenium.interactions.Actions(browser).moveToLocation(370, 400).click().perform();
    waiting().until(d -> Boolean.TRUE.equals(js.executeScript("return document.getElementById('sidebar').inert")));
  }

  @Test
  void aModeChosenInThePageReachesTheAgent() throws Exception {
    logIn();
    startThread();
    say("first, in the default mode");
    click(awaitCard(), "Allow once");
    verdict();
    awaitIdle();
    org.openqa.selenium.support.ui.Select mode = new org.openqa.selenium.support.ui.Select(
        waiting().until(d -> d.findElement(By.id("mode")).isDisplayed() ? d.findElement(By.id("mode")) : null));
    assertEquals("Ask", mode.getFirstSelectedOption().getText());
    assertTrue(inWindow(browser.findElement(By.id("mode"))));
    mode.selectByVisibleText("Read only");
    say("second, read only");
    waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .anyMatch(m -> m.getText().contains("I am in read-only mode, so I change nothing")));
    awaitIdle();
    assertEquals(1, browser.findElements(By.cssSelector(".card")).size(), "no second question in read-only mode");
    assertEquals("Read only", new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("mode")))
        .getFirstSelectedOption().getText());
    screenshot("read-only");
    // A session config option (ACP configOptions) the same way: the demo's tone.
    org.openqa.selenium.support.ui.Select tone = new org.openqa.selenium.support.ui.Select(
        browser.findElement(By.cssSelector("#config select[data-config-id=tone]")));
    assertEquals("Friendly", tone.getFirstSelectedOption().getText());
    tone.selectByVisibleText("Brief");
    waiting().until(d -> "Brief".equals(new org.openqa.selenium.support.ui.Select(
        d.findElement(By.cssSelector("#config select[data-config-id=tone]"))).getFirstSelectedOption().getText()));
    say("third, briefly");
    waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .anyMatch(m -> m.getText().startsWith("Noted: “third, briefly”")));
  }

  @Test
  void theAgentsSlashCommandsAreOfferedAndEachThreadKeepsItsDraft() throws Exception {
    logIn();
    startThread();
    say("hello");
    click(awaitCard(), "Allow once");
    verdict();
    awaitIdle();
    WebElement input = browser.findElement(By.id("input"));
    input.sendKeys("/he");
    WebElement offered = waiting().until(d -> d.findElement(By.id("commands")).isDisplayed()
        ? d.findElement(By.cssSelector("#commands button")) : null);
    assertTrue(offered.getText().startsWith("/help"), offered.getText());
    assertTrue(inWindow(offered));
    offered.click();
    assertEquals("/help ", input.getDomProperty("value"));
    input.sendKeys(Keys.ENTER);
    waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .anyMatch(m -> m.getText().contains("I can add a note")));
    // A draft stays with its thread.
    input.sendKeys("half a thought");
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElements(By.cssSelector(".threads button")).size() == 2
        && d.findElement(By.id("input")).getDomProperty("value").isEmpty());
    browser.findElements(By.cssSelector(".threads button")).get(1).click();
    waiting().until(d -> "half a thought".equals(d.findElement(By.id("input")).getDomProperty("value")));
    // A thread can be renamed; the list and the title follow (every page hears it).
    browser.findElement(By.id("rename")).click();
    org.openqa.selenium.Alert ask = waiting().until(org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
    ask.sendKeys("Garden notes");
    ask.accept();
    waiting().until(d -> "Garden notes".equals(d.findElement(By.id("thread-title")).getText())
        && d.findElements(By.cssSelector(".threads .title")).stream().anyMatch(t -> t.getText().equals("Garden notes")));
  }

  @Test
  void aMessageTypedWhileTheGatewayIsDownIsSentWhenItIsBack(Vertx vertx) throws Exception {
    // The gateway comes back on its port: one below the ephemeral range, which no other test's
    // bind(0) can take while it is down (the class's gateway has one from bind(0)).
    int port = io.switchboard.testkit.Ports.free();
    gateway.close();
    Path data = dir.resolve("data-on-a-fixed-port"); // a new one: its token is printed at its first start only
    java.util.concurrent.Callable<GatewayHarness> onItsPort = () -> new GatewayHarness(vertx, data, port, List.of(),
        List.of(), io.switchboard.Gateway.Tuning.DEFAULT, AgentHarness.demo());
    gateway = onItsPort.call();
    logIn();
    startThread();
    gateway.close();
    waiting().until(d -> "disconnected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
    say("typed while the gateway was down");
    WebElement waitingMsg = waiting().until(d -> d.findElement(By.cssSelector(".msg.user.unsent")));
    assertTrue(waitingMsg.getText().contains("waiting for the connection"), waitingMsg.getText());
    assertTrue(browser.findElement(By.id("busy")).getDomAttribute("hidden") != null, "no 'working…' while down");
    gateway = onItsPort.call();
    // The page reconnects by itself (its session survived) and sends what was typed: the agent answers it.
    WebElement card = new WebDriverWait(browser, Duration.ofSeconds(40)).until(d ->
        d.findElements(By.cssSelector(".card:not(.resolved) .options button")).isEmpty() ? null
            : d.findElement(By.cssSelector(".card:not(.resolved)")));
    assertTrue(card.getText().contains("demo-notes.md"));
    assertTrue(browser.findElements(By.cssSelector(".msg.user.unsent")).isEmpty());
    assertEquals(1, browser.findElements(By.cssSelector(".msg.user")).stream()
        .filter(m -> m.getText().contains("typed while the gateway was down")).count(), "sent once");
  }

  @Test
  void anAttachedImageReachesTheAgentAndStaysInHistoryOnAPhone() throws Exception {
    startThreadOnAPhone();
    assertTrue(browser.findElement(By.id("attach")).isDisplayed(), "an attach button before the agent ever ran");
    Path picture = dir.resolve("screen.png");
    Files.write(picture, io.switchboard.testkit.TestImages.png(1200, 800));
    WebElement file = browser.findElement(By.id("attach-file"));
    ((JavascriptExecutor) browser).executeScript("arguments[0].hidden = false", file);
    file.sendKeys(picture.toString());
    ((JavascriptExecutor) browser).executeScript("arguments[0].hidden = true", file);
    WebElement preview = waiting().until(d -> {
      List<WebElement> shown = d.findElements(By.cssSelector("#attachments img"));
      return shown.isEmpty() ? null : shown.get(0);
    });
    assertTrue(inWindow(preview), "the attached image shows above the composer");
    browser.findElement(By.id("send")).click();
    WebElement told = waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .filter(m -> m.getText().contains("1200\u00d7800 pixels")).findFirst().orElse(null));
    assertTrue(told.getText().contains("image/png"), told.getText());
    assertTrue(browser.findElements(By.cssSelector("#attachments img")).isEmpty(), "the composer is empty again");
    waiting().until(d -> !d.findElement(By.id("busy")).isDisplayed());
    screenshot("phone-image");
    for (int round = 0; round < 2; round++) {
      WebElement back = waiting().until(d -> d.findElements(By.cssSelector(".agent-image")).stream()
          .filter(img -> (Long) ((JavascriptExecutor) d).executeScript("return arguments[0].naturalWidth", img) == 1200)
          .findFirst().orElse(null));
      waiting().until(d -> inWindow(back));
      WebElement sent = browser.findElement(By.cssSelector(".msg.user .user-images img"));
      assertTrue(sent.isDisplayed());
      assertEquals(240L, ((JavascriptExecutor) browser).executeScript("return arguments[0].naturalWidth", sent),
          "the transcript keeps the page's 240-pixel preview, not the whole image");
      if (round == 0) {
        browser.navigate().refresh(); // and once more after a reload, from the transcript
      }
    }
  }

  @Test
  void imagesTooLargeForOneMessageAreMadeSmallerUntilTheyFit() throws Exception {
    logIn();
    startThread();
    WebElement file = browser.findElement(By.id("attach-file"));
    ((JavascriptExecutor) browser).executeScript("arguments[0].hidden = false", file);
    List<String> paths = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Path picture = dir.resolve("noise-" + i + ".png");
      Files.write(picture, io.switchboard.testkit.TestImages.noisePng(900, 900, i)); // ~2.4 MB each
      paths.add(picture.toString());
    }
    file.sendKeys(String.join("\n", paths));
    ((JavascriptExecutor) browser).executeScript("arguments[0].hidden = true", file);
    waiting().until(d -> d.findElements(By.cssSelector("#attachments img")).size() == 3);
    browser.findElement(By.id("send")).click();
    // Each alone fits (scaled to 700 KB), together they do not fit a 1 MiB frame: made smaller, sent.
    WebElement told = waiting().until(d -> d.findElements(By.cssSelector(".msg.agent")).stream()
        .filter(m -> m.getText().contains("I got 3 images")).findFirst().orElse(null));
    assertTrue(told.getText().contains("image/jpeg"), told.getText());
    assertEquals(3, browser.findElements(By.cssSelector(".msg.user .user-images img")).size());
  }

  @Test
  void codeInAgentTextIsHighlightedByItsLanguage() throws Exception {
    logIn();
    String t = startThread();
    String reply = "Here:\n\n```js\nconst answer = 42; // the answer\n```\n\nand some ```plain``` text.\n\n"
        + "```no-such-language\nkept as it is\n```\n";
    io.switchboard.testkit.PermissionHarness.await(gateway.vertx.eventBus().request(
        io.switchboard.bus.Addresses.THREAD_RECORD, new io.vertx.core.json.JsonObject().put("threadId", t)
            .put("event", new io.vertx.core.json.JsonObject().put("kind", "acp").put("update",
                new io.vertx.core.json.JsonObject().put("sessionUpdate", "agent_message_chunk").put("content",
                    new io.vertx.core.json.JsonObject().put("type", "text").put("text", reply))))));
    WebElement keyword = waiting().until(d -> d.findElements(By.cssSelector(".msg.agent pre code .hljs-keyword"))
        .stream().findFirst().orElse(null));
    assertEquals("const", keyword.getText());
    WebElement comment = browser.findElement(By.cssSelector(".msg.agent pre code .hljs-comment"));
    assertNotEquals(keyword.getCssValue("color"), comment.getCssValue("color"), "keywords and comments look different");
    assertEquals(List.of("JavaScript"), browser.findElements(By.cssSelector(".msg.agent .code .lang")).stream()
        .map(WebElement::getText).toList(), "the language is named once, on its block only");
    List<WebElement> blocks = browser.findElements(By.cssSelector(".msg.agent pre code"));
    assertEquals(2, blocks.size());
    assertEquals("kept as it is", blocks.get(1).getText());
    assertTrue(blocks.get(1).findElements(By.cssSelector("span")).isEmpty(), "an unknown language is left plain");
    assertTrue(inWindow(keyword));

    // Audio an agent sends is a player the page's policy lets play (media from data: URLs only).
    java.nio.ByteBuffer wav = java.nio.ByteBuffer.allocate(44 + 8000).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    wav.put("RIFF".getBytes()).putInt(36 + 8000).put("WAVEfmt ".getBytes()).putInt(16).putShort((short) 1)
        .putShort((short) 1).putInt(8000).putInt(8000).putShort((short) 1).putShort((short) 8)
        .put("data".getBytes()).putInt(8000);
    io.switchboard.testkit.PermissionHarness.await(gateway.vertx.eventBus().request(
        io.switchboard.bus.Addresses.THREAD_RECORD, new io.vertx.core.json.JsonObject().put("threadId", t)
            .put("event", new io.vertx.core.json.JsonObject().put("kind", "acp").put("update",
                new io.vertx.core.json.JsonObject().put("sessionUpdate", "agent_message_chunk").put("content",
                    new io.vertx.core.json.JsonObject().put("type", "audio").put("mimeType", "audio/wav")
                        .put("data", java.util.Base64.getEncoder().encodeToString(wav.array())))))));
    WebElement audio = waiting().until(d -> d.findElements(By.cssSelector("audio.agent-audio")).stream().findFirst()
        .orElse(null));
    waiting().until(d -> ((Number) ((JavascriptExecutor) d).executeScript("return arguments[0].duration || 0", audio))
        .doubleValue() > 0.9);
    assertTrue(audio.isDisplayed());
  }

  @Test
  void aThreadIsArchivedOutOfTheListAndRestored() throws Exception {
    logIn();
    startThread();
    say("the first");
    click(awaitCard(), "Allow once");
    awaitIdle();
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElements(By.cssSelector("#threads li")).size() == 2);
    waiting().until(d -> d.findElement(By.id("thread-title")).getText().equals("New thread"));
    say("the second");
    awaitCard();
    // At work (its question waits), it stays: the page says why.
    browser.findElement(By.id("archive")).click();
    WebElement toast = waiting().until(d -> d.findElement(By.id("toast")).isDisplayed() ? d.findElement(By.id("toast")) : null);
    assertTrue(toast.getText().contains("at work"), toast.getText());
    assertEquals(2, browser.findElements(By.cssSelector("#threads li")).size());
    // The first one, idle, goes: out of the list, under Archived, and the page stays on a listed thread.
    browser.findElements(By.cssSelector("#threads li button")).stream()
        .filter(b -> b.getText().contains("the first")).findFirst().orElseThrow().click();
    waiting().until(d -> d.findElement(By.id("thread-title")).getText().equals("the first"));
    browser.findElement(By.id("archive")).click();
    waiting().until(d -> d.findElements(By.cssSelector("#threads li")).size() == 1
        && d.findElement(By.id("thread-title")).getText().equals("the second"));
    WebElement archived = browser.findElement(By.id("archived"));
    assertTrue(archived.isDisplayed());
    assertEquals("Archived (1)", browser.findElement(By.id("archived-count")).getText());
    browser.navigate().refresh();
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
    waiting().until(d -> d.findElements(By.cssSelector("#threads li")).size() == 1);
    assertTrue(browser.findElement(By.cssSelector("#threads li")).getText().contains("the second"), "archived after a reload");
    browser.findElement(By.id("archived-count")).click();
    WebElement restore = waiting().until(d -> d.findElement(By.cssSelector("#archived-threads .restore")));
    assertTrue(inWindow(restore));
    restore.click();
    waiting().until(d -> d.findElements(By.cssSelector("#threads li")).size() == 2);
    assertFalse(browser.findElement(By.id("archived")).isDisplayed());
    // Deleting takes two steps: archive, then Delete there and confirm.
    browser.findElements(By.cssSelector("#threads li button")).stream()
        .filter(b -> b.getText().contains("the first")).findFirst().orElseThrow().click();
    waiting().until(d -> d.findElement(By.id("thread-title")).getText().equals("the first"));
    browser.findElement(By.id("archive")).click();
    waiting().until(d -> d.findElements(By.cssSelector("#archived-threads .delete")).size() == 1);
    if (!"true".equals(browser.findElement(By.id("archived")).getDomProperty("open"))) {
      browser.findElement(By.id("archived-count")).click();
    }
    browser.findElement(By.cssSelector("#archived-threads .delete")).click();
    org.openqa.selenium.Alert confirm = waiting().until(
        org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
    assertTrue(confirm.getText().contains("the permission audit keeps its requests"), confirm.getText());
    confirm.accept();
    waiting().until(d -> !d.findElement(By.id("archived")).isDisplayed());
    browser.navigate().refresh();
    waiting().until(d -> d.findElements(By.cssSelector("#threads li")).size() == 1);
    assertTrue(browser.findElement(By.cssSelector("#threads li")).getText().contains("the second"));
    assertFalse(browser.findElement(By.id("archived")).isDisplayed(), "gone after a reload too");
  }

  @Test
  void aPhoneSizedWindow() throws Exception {
    startThreadOnAPhone();
    say("please remember the phone");
    WebElement card = awaitCard();
    screenshot("phone-card");
    remindedWhileWaiting();
    click(card, "Allow once");
    verdict();
    long overflow = (Long) ((JavascriptExecutor) browser).executeScript(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth");
    assertTrue(overflow <= 0, "no sideways scrolling on a phone: " + overflow);
    screenshot("phone-done");
    // The audit, reached from the phone's menu, shows the reminder on screen too.
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.id("audit-open")).isDisplayed()
        && inWindow(d.findElement(By.id("audit-open"))));
    browser.findElement(By.id("audit-open")).click();
    auditShowsTheAnsweredReminder();
    screenshot("phone-audit");
  }

  /**
   * A VibeAround plugin's group (no cardsInGroups) is told to answer in the web chat: the page shows
   * that card — its thread's badge, the card on screen — and answers it, on a desktop and a phone
   * (issue 28, point 2).
   */
  @Test
  void aGroupsCardThatPointsToTheWebChatShowsThereAndIsAnsweredOnADesktopAndAPhone(Vertx vertx) throws Exception {
    gateway.close();
    io.switchboard.testkit.PluginControl plugin = new io.switchboard.testkit.PluginControl(dir.resolve("im"));
    gateway = new GatewayHarness(vertx, dir.resolve("data-im"), List.of(),
        List.of(plugin.spec("va", "vibearound", List.of())), io.switchboard.Gateway.Tuning.DEFAULT.plugins(),
        AgentHarness.demo());
    plugin.awaitType("initialized", 1);
    logIn();
    for (String chat : List.of("group-desktop", "group-phone")) {
      if (chat.equals("group-phone")) {
        browser.manage().window().setSize(new Dimension(390, 844));
      }
      plugin.act(new io.vertx.core.json.JsonObject().put("prompt", "edit something").put("chat", chat)
          .put("sender", "42").put("scope", "group"));
      plugin.await(r -> "_va/system_text".equals(r.getString("method")) && r.getJsonObject("params")
          .getString("text").contains("answer it in the web chat"), chat.equals("group-phone") ? 2 : 1, "the pointer");
      if (chat.equals("group-phone")) {
        browser.findElement(By.id("menu")).click();
      }
      String[] lastRect = {null};
      WebElement badge = waiting().until(d -> {
        List<WebElement> b = d.findElements(By.cssSelector(".threads .pending"));
        // On a phone the menu slides in: the badge counts once it is wholly on screen and has stopped
        // moving (a click during the slide lands on whatever has moved under the point).
        if (b.isEmpty() || !b.get(0).isDisplayed() || !inWindow(b.get(0))) {
          return null;
        }
        String rect = String.valueOf(page.script("return JSON.stringify(arguments[0].getBoundingClientRect())", b.get(0)));
        boolean still = rect.equals(lastRect[0]);
        lastRect[0] = rect;
        return still ? b.get(0) : null;
      });
      assertEquals("1", badge.getText());
      badge.click(); // opens the thread
      WebElement card = awaitCard();
      assertTrue(inWindow(card.findElement(By.cssSelector(".options button"))), "its buttons are on screen");
      screenshot(chat);
      click(card, "Allow once");
      assertTrue(verdict().contains("answered by web"), "answered from the page");
      waiting().until(d -> d.findElements(By.cssSelector(".threads .pending")).isEmpty());
    }
  }

  /** The composer says what Enter does, as it is: it sends on a keyboard, breaks the line on a touch screen. */
  @Test
  void theComposerSaysWhatEnterDoesOnATouchScreenAndOnAKeyboard() throws Exception {
    logIn();
    startThread();
    String desktop = browser.findElement(By.id("input")).getDomProperty("placeholder");
    assertTrue(desktop.contains("Enter sends"), desktop);
    browser.executeCdpCommand("Emulation.setTouchEmulationEnabled", java.util.Map.of("enabled", true,
        "maxTouchPoints", 5));
    try {
      browser.manage().window().setSize(new Dimension(390, 844));
      browser.navigate().refresh();
      waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
      assertEquals(true, ((JavascriptExecutor) browser).executeScript(
          "return matchMedia('(pointer: coarse)').matches"), "a touch screen, as the page sees it");
      String phone = browser.findElement(By.id("input")).getDomProperty("placeholder");
      assertFalse(phone.contains("Enter sends"), phone);
      assertTrue(phone.contains("tap Send"), phone);
      WebElement input = browser.findElement(By.id("input"));
      assertTrue(inWindow(input), "the composer is on screen at 390x844");
      screenshot("phone-placeholder");
    } finally {
      browser.executeCdpCommand("Emulation.setTouchEmulationEnabled", java.util.Map.of("enabled", false));
    }
  }

  /**
   * Projects (a thread's work in a git worktree of its own): on a phone and on a desktop, two threads
   * start in the project App, each writes its note there, and the Changes view shows it; the first
   * is committed and merged into main, the second discarded. The real repository says so after.
   */
}
