package io.switchboard.web;

import static io.switchboard.testkit.PermissionHarness.waitFor;

import io.switchboard.bus.Addresses;
import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.WebElement;

/**
 * A browser test class whose tests each get a gateway of their own (the built-in demo agent) on a
 * port of their own, and the page's common steps on it.
 */
@ExtendWith(VertxExtension.class)
abstract class BrowserGatewayClass extends BrowserClass {
  @TempDir
  Path root;
  /** This test's own directory (the class shares one temporary root, as it shares the browser). */
  Path dir;
  /** Each test gets a gateway of its own on a port of its own: no page, cookie or draft of one test is another's. */
  GatewayHarness gateway;

  @BeforeEach
  void start(Vertx vertx, TestInfo info) throws Exception {
    dir = Files.createDirectories(root.resolve(testName));
    gateway = new GatewayHarness(vertx, dir.resolve("data"), List.of(), AgentHarness.demo());
  }

  @AfterEach
  void stop() {
    // The next test starts as a fresh browser would: one blank tab at the desktop size.
    String keep = browser.getWindowHandles().iterator().next();
    for (String handle : browser.getWindowHandles()) {
      if (!handle.equals(keep)) {
        browser.switchTo().window(handle).close();
      }
    }
    browser.switchTo().window(keep);
    page.forget();
    browser.manage().window().setSize(new Dimension(1280, 900));
    gateway.close();
  }

  void logIn() {
    page.logIn(gateway.url("/"), gateway.token);
  }

  String startThread() {
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElement(By.id("input")).isEnabled()
        && d.findElements(By.cssSelector(".threads button.current")).size() == 1);
    return threadId();
  }

  /** Logs in at 390x844 and starts a thread from the phone menu. */
  void startThreadOnAPhone() {
    browser.manage().window().setSize(new Dimension(390, 844));
    logIn();
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> d.findElement(By.id("input")).isEnabled());
  }

  String threadId() {
    waitFor(() -> threadIds().size() == 1, "the thread to exist");
    return threadIds().get(0);
  }

  List<String> threadIds() {
    return io.switchboard.testkit.PermissionHarness.await(gateway.vertx.eventBus()
            .<io.vertx.core.json.JsonObject>request(io.switchboard.bus.Addresses.THREAD_LIST,
                new io.vertx.core.json.JsonObject()))
        .body().getJsonArray("threads").stream()
        .map(t -> ((io.vertx.core.json.JsonObject) t).getString("threadId")).toList();
  }

  void say(String text) {
    page.say(text);
  }

  WebElement awaitCard() {
    return page.awaitCard();
  }

  void click(WebElement card, String optionName) {
    card.findElements(By.cssSelector(".options button")).stream().filter(b -> b.getText().equals(optionName))
        .findFirst().orElseThrow().click();
  }

  String verdict() {
    return waiting().until(d -> {
      List<WebElement> v = d.findElements(By.cssSelector(".card.resolved .verdict"));
      return v.isEmpty() ? null : v.get(v.size() - 1).getText();
    });
  }

  void awaitIdle() {
    waiting().until(d -> !d.findElement(By.id("busy")).isDisplayed()
        && d.findElements(By.cssSelector(".msg.agent")).stream().anyMatch(m -> m.getText().contains("demo-notes")));
  }


  /** Whether an element is wholly inside the window (what a person sees without scrolling the page). */
  boolean inWindow(WebElement e) {
    return page.inView(e);
  }
}
