package io.switchboard.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.Chromium;
import io.switchboard.testkit.JarGateway;
import io.switchboard.testkit.Ports;
import io.vertx.core.json.JsonArray;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The edge's page in a real browser with two agent nodes: the person starts a thread on the second
 * (the page's node picker), whose node is then paused (SIGSTOP) for longer than the cluster's
 * member timeout: the card says why it cannot be answered and its
 * buttons do nothing; when the same node (the same incarnation, its requests still pending) is
 * resumed and back in the cluster, the card is answerable again and the answer ends the request
 * once in that node's ledger. At phone and desktop sizes.
 */
@org.junit.jupiter.api.parallel.ResourceLock("cluster") // with ClusterIT (its own lock), two clusters at most at once
@org.junit.jupiter.api.Order(2) // the longest chains first (pom.xml, failsafe)
class ClusterBrowserIT {
  static final Path SCREENSHOTS = Path.of("target", "screenshots");

  @TempDir
  Path dir;
  LoopbackCluster cluster;
  ChromeDriver browser;

  @org.junit.jupiter.api.BeforeEach
  void setUp() {
    cluster = new LoopbackCluster(dir);
  }

  @AfterEach
  void stop() {
    if (browser != null) {
      browser.quit();
    }
    cluster.close();
  }

  /** One cluster for both sizes: the node is paused once with the page at each. */
  @Test
  void aCardOfAPausedAgentNodeSaysWhyAndIsAnswerableWhenTheNodeIsBackAtPhoneAndDesktopSizes() throws Exception {
    int[] ports = {Ports.free(), Ports.free(), Ports.free()};
    List<String> members = LoopbackCluster.members(ports);
    java.util.LinkedHashMap<String, Path> configs = new java.util.LinkedHashMap<>();
    configs.put("build-1", cluster.config("build-1", "agent", ports[1], members));
    configs.put("build-2", cluster.config("build-2", "agent", ports[2], members));
    configs.put("edge", cluster.config("edge", "edge", ports[0], members));
    java.util.Map<String, JarGateway> nodes = cluster.startAll(configs);
    JarGateway agentNode = nodes.get("build-2");
    JarGateway edge = nodes.get("edge");
    LoopbackCluster.awaitAgentNodes(edge, List.of("build-1", "build-2"));
    browser = Chromium.start(dir.resolve("chromium"));
    logIn(edge);
    staleWhileTheAgentNodeIsPaused(edge, agentNode);
  }

  /**
   * A thread on build-2 started on a phone, its card while build-2 is paused seen at phone and at
   * desktop size (one pause: each takes the member timeout and a merge), and its answer once the
   * node is back, on the desktop.
   */
  private void staleWhileTheAgentNodeIsPaused(JarGateway edge, JarGateway agentNode) throws Exception {
    int width = 390;
    browser.manage().window().setSize(new Dimension(width, 844));
    browser.get("http://127.0.0.1:" + edge.port() + "/");
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
    browser.findElement(By.id("menu")).click(); // a phone: the thread list is behind the menu
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
    // Two agent nodes: the person picks where the thread runs, and the thread list says where.
    // (on a phone the menu slides in for 0.2 s: the picker is on screen once it has)
    WebElement pick = browser.findElement(By.id("node-select"));
    new WebDriverWait(browser, Duration.ofSeconds(5)).until(d -> pick.isDisplayed() && inWindow(pick));
    assertTrue(pick.isDisplayed() && inWindow(pick), "the node picker is on screen");
    new org.openqa.selenium.support.ui.Select(pick).selectByVisibleText("build-2");
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElement(By.id("input")).isEnabled());
    String listed = waiting().until(d -> {
      List<WebElement> current = d.findElements(By.cssSelector(".threads button.current .agent"));
      return current.isEmpty() ? null : current.get(0).getDomProperty("textContent");
    });
    assertEquals("Demo agent \u00b7 build-2", listed);
    WebElement input = browser.findElement(By.id("input"));
    input.sendKeys("edit while the node is paused");
    input.sendKeys(Keys.ENTER);
    WebElement card = waiting().until(d -> d.findElements(By.cssSelector(".card:not(.resolved) .options button"))
        .isEmpty() ? null : d.findElement(By.cssSelector(".card:not(.resolved)")));

    // Paused past the member timeout (5 s): the edge declares it gone.
    LoopbackCluster.signal("STOP", agentNode.process());
    WebElement verdict = card.findElement(By.cssSelector(".verdict"));
    new WebDriverWait(browser, Duration.ofSeconds(40)).until(d -> verdict.getText()
        .startsWith("Cannot be answered now: agent node build-2 left the cluster"));
    assertTrue(inWindow(verdict), "the reason is on screen");
    // The same news comes as a toast, which may cover the card on a phone for its 4 s; then the
    // reason on the card is what shows.
    waiting().until(d -> !d.findElement(By.id("toast")).isDisplayed());
    Object onTop = ((JavascriptExecutor) browser).executeScript("const r = arguments[0].getBoundingClientRect();"
        + " const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        + " return top === arguments[0] || arguments[0].contains(top) ? 'the reason'"
        + " : top.tagName + '#' + top.id + '.' + top.className + ' ' + JSON.stringify(r);", verdict);
    assertEquals("the reason", onTop, "nothing covers the reason");
    List<WebElement> buttons = card.findElements(By.cssSelector(".options button"));
    assertFalse(buttons.isEmpty());
    assertTrue(buttons.stream().noneMatch(WebElement::isEnabled), "no option can be tapped");
    screenshot(width, "stale");
    ((JavascriptExecutor) browser).executeScript("arguments[0].click();", buttons.get(0));
    Thread.sleep(300);
    assertTrue(card.getAttribute("class").contains("stale") && !card.getAttribute("class").contains("resolved"));

    // The same moment on a desktop: the node picker in the sidebar, the card's reason on screen.
    width = 1280;
    browser.manage().window().setSize(new Dimension(width, 900));
    WebElement picker = browser.findElement(By.id("node-select"));
    waiting().until(d -> picker.isDisplayed() && inWindow(picker));
    ((JavascriptExecutor) browser).executeScript("arguments[0].scrollIntoView({block: 'center'});", verdict);
    assertTrue(inWindow(verdict), "the reason is on screen at desktop size");
    assertTrue(verdict.getText().startsWith("Cannot be answered now: agent node build-2 left the cluster"));
    screenshot(width, "stale");

    // Resumed: the same incarnation, its request still pending there, merges back into the cluster.
    long resumed = System.nanoTime();
    LoopbackCluster.signal("CONT", agentNode.process());
    new WebDriverWait(browser, Duration.ofSeconds(90)).until(d -> verdict.getText().equals("Answerable again"));
    System.out.printf("cluster: a paused agent node's card was answerable again %d ms after SIGCONT%n",
        (System.nanoTime() - resumed) / 1_000_000);
    assertTrue(card.findElements(By.cssSelector(".options button")).stream().allMatch(WebElement::isEnabled));
    card.findElements(By.cssSelector(".options button")).stream().filter(b -> b.getText().equals("Allow once"))
        .findFirst().orElseThrow().click();
    waiting().until(d -> card.getAttribute("class").contains("resolved")
        && card.findElement(By.cssSelector(".verdict")).getText().startsWith("Allow once — answered by"));
    screenshot(width, "answered");
    JsonArray ledger = LoopbackCluster.ledger(cluster.dataDir("build-2"));
    assertEquals(1, ledger.size(), ledger.encodePrettily());
    assertTrue(ledger.stream().allMatch(r -> "selected".equals(((io.vertx.core.json.JsonObject) r)
        .getJsonObject("outcome").getString("outcome"))), ledger.encodePrettily());
  }

  private void logIn(JarGateway edge) {
    browser.get("http://127.0.0.1:" + edge.port() + "/");
    WebElement token = waiting().until(d -> {
      WebElement t = d.findElement(By.id("token"));
      return t.isDisplayed() ? t : null;
    });
    token.sendKeys(edge.token());
    browser.findElement(By.cssSelector("#login-form button")).click();
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
  }

  private WebDriverWait waiting() {
    return new WebDriverWait(browser, Duration.ofSeconds(20));
  }

  private boolean inWindow(WebElement e) {
    return (Boolean) ((JavascriptExecutor) browser).executeScript("const r = arguments[0].getBoundingClientRect();"
        + " return r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight"
        + " && r.right <= window.innerWidth;", e);
  }

  private void screenshot(int width, String name) throws Exception {
    Files.createDirectories(SCREENSHOTS);
    Files.write(SCREENSHOTS.resolve("ClusterBrowserIT-" + width + "-" + name + ".png"),
        browser.getScreenshotAs(OutputType.BYTES));
  }
}
