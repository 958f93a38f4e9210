package io.switchboard.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.Gateway;
import io.switchboard.config.AgentSpec;
import io.switchboard.config.Settings;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.devtools.Command;
import org.openqa.selenium.devtools.DevTools;
import org.openqa.selenium.devtools.Event;

/**
 * The page as an installable web app that push reaches, in Debian's Chromium (headless) against the
 * whole gateway with the demo agent, at phone size: its manifest and service worker, a push delivered
 * through the DevTools protocol shown and closed, the "Notify me" control where push cannot work, a
 * notification's link opening its card, and a card's deadline, reminder and expired end as the page
 * draws them. Screenshots go to target/screenshots.
 */
@ExtendWith(VertxExtension.class)
class BrowserPushTest extends BrowserClass {
  /**
   * A name this Chromium alone resolves to 127.0.0.1: a page served under it is not a secure context
   * (only localhost and loopback addresses are, over plain HTTP), as a LAN address would not be.
   */
  static final String PLAIN_NAME = "switchboard.test";
  /** A 65-byte uncompressed P-256 point, base64url: the shape of the key welcome's {@code push} carries. */
  static final String PUBLIC_KEY =
      "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U";

  @TempDir
  Path root;
  GatewayHarness gateway;
  /** Each test has a gateway of its own on a port (an origin) of its own. */
  DevTools devTools;
  /** Service worker registrations by scope, as the DevTools protocol reports them. */
  final Map<String, String> registrations = new ConcurrentHashMap<>();
  final HttpClient http = HttpClient.newHttpClient();

  @Override
  String[] chromiumFlags() {
    return new String[] {"--host-resolver-rules=MAP " + PLAIN_NAME + " 127.0.0.1"};
  }

  @Override
  void browserStarted() {
    devTools = browser.getDevTools();
    devTools.createSession();
    // Chromium reports each registration (and its id, which deliverPushMessage needs) once enabled.
    devTools.addListener(new Event<Map<?, ?>>("ServiceWorker.workerRegistrationUpdated",
        input -> (Map<?, ?>) input.read(Map.class)), body -> {
      for (Object r : (List<?>) body.get("registrations")) {
        Map<?, ?> registration = (Map<?, ?>) r;
        if (!Boolean.TRUE.equals(registration.get("isDeleted"))) {
          registrations.put((String) registration.get("scopeURL"), (String) registration.get("registrationId"));
        }
      }
    });
    devTools.send(new Command<Void>("ServiceWorker.enable", Map.of()));
  }

  @Override
  void browserStopping() {
    if (devTools != null) {
      devTools.close();
    }
  }

  @BeforeEach
  void start(Vertx vertx, TestInfo info) throws Exception {
    Path dir = Files.createDirectories(root.resolve(testName));
    AgentSpec demo = AgentHarness.demo();
    Settings settings = new Settings(new Settings.Http("127.0.0.1", 0, List.of(), false, List.of(PLAIN_NAME)),
        dir.resolve("data"), demo.id(), List.of(demo), List.of(), Settings.LogFormat.TEXT);
    if (testName.startsWith("aCardsDeadline")) {
      // A reminder after 2 s and a deadline of 8 s (the config's floor is 10 s; a test may go lower).
      settings = settings.withAttention(new io.switchboard.config.Attention(new io.switchboard.config.Attention.Spec(
          2_000L, 0L, null, 8_000L, null, null), java.util.Map.of(), java.util.Map.of()));
    }
    gateway = new GatewayHarness(vertx, settings, Gateway.Tuning.DEFAULT);
    browser.manage().window().setSize(new Dimension(390, 844));
  }

  @AfterEach
  void stop() {
    page.forget();
    gateway.close();
  }

  /** Runs {@code js} with {@code done} (the last argument) to call with its answer. */
  private Object async(String js, Object... args) {
    return page.async(js, args);
  }

  private String origin() {
    return "http://127.0.0.1:" + gateway.port;
  }

  private void logIn(String origin) {
    page.logIn(origin + "/", gateway.token);
  }

  /** Opens the phone menu and starts a thread from it; its id. */
  private String startThread() {
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
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

  private WebElement awaitCard() {
    return page.awaitCard();
  }

  /** Whether the element is wholly inside the window. */
  private boolean inView(WebElement e) {
    return page.inView(e);
  }

  /** The page's service worker once it is active: its script URL and scope. */
  private String activeWorker() {
    return (String) async("const done = arguments[arguments.length - 1];"
        + "navigator.serviceWorker.ready.then(r => done(r.active.scriptURL + ' ' + r.scope), e => done('failed ' + e));");
  }

  /** The notifications this origin's service worker shows, as "tag|title|body" lines. */
  @SuppressWarnings("unchecked")
  private List<String> notifications() {
    return (List<String>) async("const done = arguments[arguments.length - 1];"
        + "navigator.serviceWorker.ready.then(r => r.getNotifications())"
        + ".then(ns => done(ns.map(n => n.tag + '|' + n.title + '|' + n.body)), e => done(['failed ' + e]));");
  }

  /** What the page does with a welcome that carries push (the gateway's side of it is another change). */
  private void offerPush() {
    assertEquals(null, async("const done = arguments[arguments.length - 1];"
        + "import('/js/push.js').then(m => m.pushOffered({publicKey: arguments[0]})).then(() => done(null), e => done(String(e)));",
        PUBLIC_KEY));
  }

  private void deliverPush(String registrationId, JsonObject message) {
    devTools.send(new Command<Void>("ServiceWorker.deliverPushMessage",
        Map.of("origin", origin(), "registrationId", registrationId, "data", message.encode())));
  }

  @Test
  void thePageIsAnInstallableAppWhoseServiceWorkerBecomesActive() throws Exception {
    logIn(origin());
    assertEquals(origin() + "/manifest.webmanifest",
        browser.findElement(By.cssSelector("link[rel=manifest]")).getDomProperty("href"));
    assertEquals(origin() + "/icons/apple-touch-icon.png",
        browser.findElement(By.cssSelector("link[rel=apple-touch-icon]")).getDomProperty("href"));
    assertEquals(origin() + "/sw.js " + origin() + "/", activeWorker());
    // Chromium reads the manifest as an app's: no errors, and the fields an install needs.
    Map<String, Object> manifest = browser.executeCdpCommand("Page.getAppManifest", Map.of());
    assertEquals(List.of(), manifest.get("errors"), manifest.toString());
    JsonObject parsed = new JsonObject((String) manifest.get("data"));
    assertEquals("Switchboard", parsed.getString("name"));
    assertEquals("standalone", parsed.getString("display"));
    assertEquals("/", parsed.getString("start_url"));
    // Every icon it names is a real image of the size it says.
    @SuppressWarnings("unchecked")
    List<String> icons = (List<String>) async("const done = arguments[arguments.length - 1];"
        + "fetch('/manifest.webmanifest').then(r => r.json()).then(m => Promise.all(m.icons.map(i => {"
        + "  const img = new Image(); img.src = i.src;"
        + "  return img.decode().then(() => i.src + ' ' + i.sizes + ' ' + img.naturalWidth + 'x' + img.naturalHeight,"
        + "    () => i.src + ' broken'); }))).then(done, e => done(['failed ' + e]));");
    assertEquals(5, icons.size(), icons.toString());
    for (String icon : icons) {
      String[] parts = icon.split(" ");
      assertTrue(parts.length == 3 && (parts[1].equals(parts[2]) || parts[1].equals("any")), icon);
    }
    HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(origin() + "/")).build(),
        HttpResponse.BodyHandlers.ofString());
    String csp = page.headers().firstValue("Content-Security-Policy").orElseThrow();
    assertTrue(csp.contains("worker-src 'self'") && csp.contains("manifest-src 'self'"), csp);
    screenshot("installable");
  }

  @Test
  void aPushShowsTheCardsNotificationAndItsEndClosesIt() throws Exception {
    logIn(origin());
    activeWorker();
    browser.executeCdpCommand("Browser.grantPermissions",
        Map.of("permissions", List.of("notifications"), "origin", origin()));
    String registrationId = waiting().until(d -> registrations.get(origin() + "/"));
    assertEquals(List.of(), notifications());

    JsonObject card = new JsonObject().put("type", "card").put("requestId", "req-1").put("threadId", "thr-1")
        .put("title", "Demo agent asks your permission").put("body", "Add a note to demo-notes.md")
        .put("url", "/#thread=thr-1&request=req-1");
    deliverPush(registrationId, card);
    waiting().until(d -> notifications().equals(
        List.of("req-1|Demo agent asks your permission|Add a note to demo-notes.md")));
    // A reminder of the same card replaces its notification (one per question), saying so.
    deliverPush(registrationId, card.copy().put("type", "remind").put("body", "Still waiting: demo-notes.md"));
    waiting().until(d -> notifications().equals(
        List.of("req-1|Demo agent asks your permission|Still waiting: demo-notes.md")));
    deliverPush(registrationId, new JsonObject().put("type", "end").put("requestId", "req-1"));
    waiting().until(d -> notifications().isEmpty());
  }

  @Test
  void notifyMeOnAPlainHttpAddressSaysPushNeedsHttps() throws Exception {
    String plain = "http://" + PLAIN_NAME + ":" + gateway.port;
    logIn(plain);
    assertEquals(false, script("return window.isSecureContext"));
    assertEquals(false, script("return 'serviceWorker' in navigator"), "no service worker outside a secure context");
    // The gateway's welcome offers push (its key): the control is in the menu, and says why it cannot work here.
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
    waiting().until(d -> d.findElement(By.id("push")).isDisplayed());
    WebElement note = browser.findElement(By.id("push-note"));
    waiting().until(d -> note.isDisplayed());
    String expected = "Push needs HTTPS. http://localhost works; a LAN address like http://192.168.x.y needs TLS "
        + "(a reverse proxy with a certificate) or a tunnel.";
    assertEquals(expected, note.getText());
    // A click says it again rather than failing silently; nothing is asked.
    script("document.getElementById('push-note').textContent = ''");
    browser.findElement(By.id("push-on")).click();
    waiting().until(d -> expected.equals(note.getText()));
    assertTrue(inView(note), "the explanation shows in the phone menu");
    assertFalse(browser.findElement(By.id("push-off")).isDisplayed());
    screenshot("needs-https");
  }

  @Test
  void notifyMeWhereNotificationsAreBlockedSaysWhere() throws Exception {
    logIn(origin());
    activeWorker();
    browser.executeCdpCommand("Browser.setPermission", Map.of("permission", Map.of("name", "notifications"),
        "setting", "denied", "origin", origin()));
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
    offerPush();
    WebElement note = browser.findElement(By.id("push-note"));
    String expected = "Notifications are blocked for this site in the browser settings.";
    waiting().until(d -> expected.equals(note.getText()));
    script("document.getElementById('push-note').textContent = ''");
    browser.findElement(By.id("push-on")).click();
    waiting().until(d -> expected.equals(note.getText()));
    assertFalse(browser.findElement(By.id("push-off")).isDisplayed());
  }

  @Test
  void aNotificationsLinkOpensItsThreadAndShowsTheCard() throws Exception {
    logIn(origin());
    String first = startThread();
    say("ask me from the first thread");
    String requestId = awaitCard().getDomAttribute("data-request-id");
    String second = startThread();
    assertNotEquals(first, second);
    waiting().until(d -> d.findElements(By.cssSelector(".card")).isEmpty());
    // What the service worker opens when a notification is tapped and no page is open.
    browser.get(origin() + "/#thread=" + first + "&request=" + requestId);
    WebElement card = waiting().until(d -> d.findElements(By.cssSelector(".card[data-request-id='" + requestId + "']"))
        .stream().findFirst().orElse(null));
    waiting().until(d -> inView(card.findElement(By.cssSelector(".options button"))));
    assertEquals(first, currentThread(), "not the newest thread, which a reload opens");
    assertEquals(origin() + "/", browser.getCurrentUrl(), "the link is read once, not kept for a reload");
    screenshot("opened-from-a-notification");
    // A page already open is told by its service worker: the same link, by message.
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#threads li")).isDisplayed());
    browser.findElements(By.cssSelector("#threads button")).stream()
        .filter(b -> !b.getText().contains("ask me from the first thread")).findFirst().orElseThrow().click();
    waiting().until(d -> d.findElements(By.cssSelector(".card .options button")).stream().noneMatch(WebElement::isDisplayed));
    script("navigator.serviceWorker.dispatchEvent(new MessageEvent('message', {data: {type: 'open', url: arguments[0]}}))",
        "/#thread=" + first + "&request=" + requestId);
    waiting().until(d -> d.findElements(By.cssSelector(".card[data-request-id='" + requestId + "'] .options button"))
        .stream().anyMatch(b -> b.isDisplayed() && inView(b)));
    assertEquals(first, currentThread());
  }

  /** The gateway's own frames for a card with a reminder after 2 s and a deadline of 8 s, at phone size. */
  @Test
  void aCardsDeadlineCountsDownAReminderShowsAndItExpiresAsARulesEnd() throws Exception {
    logIn(origin());
    startThread();
    say("note this");
    WebElement card = awaitCard();
    WebElement deadline = card.findElement(By.cssSelector(".deadline"));
    String first = deadline.getText();
    assertTrue(first.matches("(?s)expires \\d\\d:\\d\\d · 0:0\\d left.*then the agent is told no.*"), first);
    waiting().until(d -> !deadline.getText().equals(first)); // it counts down
    script("arguments[0].scrollIntoView({block: 'nearest'})", card.findElement(By.cssSelector(".permission")));
    assertTrue(inView(deadline), "the deadline shows at phone size");
    for (WebElement b : card.findElements(By.cssSelector(".options button"))) {
      assertTrue(inView(b), "with the card's buttons");
    }
    screenshot("deadline");

    WebElement reminder = waiting().until(d -> card.findElements(By.cssSelector(".attention")).stream()
        .filter(WebElement::isDisplayed).findFirst().orElse(null));
    assertTrue(reminder.getText().startsWith("waiting") && reminder.getText().endsWith("reminder"), reminder.getText());
    screenshot("reminder");

    waiting().until(d -> card.getDomAttribute("class").contains("expired"));
    String note = card.findElement(By.cssSelector(".expired-note")).getText();
    assertTrue(note.startsWith("Expired — deadline 8s of the gateway's attention settings")
        && note.contains("the agent was told no"), note);
    assertTrue(card.findElements(By.cssSelector(".options button")).stream().noneMatch(WebElement::isDisplayed),
        "an ended card's buttons go");
    assertFalse(deadline.isDisplayed());
    assertFalse(card.getText().contains("answered by"), "not a person's answer");
    assertTrue(inView(card.findElement(By.cssSelector(".expired-note"))) || scrolledIntoView(card));
    screenshot("expired");

    // After a reload the history keeps it, as it ended.
    browser.navigate().refresh();
    WebElement again = waiting().until(d -> d.findElements(By.cssSelector(".card.expired .expired-note")).stream()
        .findFirst().orElse(null));
    assertTrue(again.getText().startsWith("Expired — deadline 8s"), again.getText());
  }

  private boolean scrolledIntoView(WebElement card) {
    script("arguments[0].scrollIntoView({block: 'nearest'})", card.findElement(By.cssSelector(".expired-note")));
    return inView(card.findElement(By.cssSelector(".expired-note")));
  }
}
