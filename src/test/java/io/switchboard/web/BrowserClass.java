package io.switchboard.web;

import io.switchboard.testkit.Chromium;
import io.switchboard.testkit.PageDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A browser test class: one Chromium for the class (each test starts a gateway of its own), the
 * page's steps ({@link PageDriver}), and screenshots named after the test under target/screenshots.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class BrowserClass {
  static final Path SCREENSHOTS = Path.of("target", "screenshots");

  ChromeDriver browser;
  PageDriver page;
  /** The running test's method name: its gateway's folder and its screenshots' prefix. */
  String testName;

  @BeforeAll
  void startBrowser() throws Exception {
    browser = Chromium.start(Files.createTempDirectory("sb-chromium"), chromiumFlags());
    page = new PageDriver(browser);
    Files.createDirectories(SCREENSHOTS);
    browserStarted();
  }

  @AfterAll
  void quitBrowser() {
    browserStopping();
    if (browser != null) {
      browser.quit();
    }
  }

  /** Command-line flags a class's Chromium needs beyond the usual. */
  String[] chromiumFlags() {
    return new String[0];
  }

  /** Once the class's Chromium runs (DevTools listeners, say). */
  void browserStarted() throws Exception {
  }

  /** Before the class's Chromium quits. */
  void browserStopping() {
  }

  /** Runs before the subclass's own {@code @BeforeEach}. */
  @BeforeEach
  void nameTest(TestInfo info) {
    testName = info.getTestMethod().orElseThrow().getName();
  }

  WebDriverWait waiting() {
    return page.waiting();
  }

  Object script(String js, Object... args) {
    return page.script(js, args);
  }

  void screenshot(String name) throws Exception {
    page.screenshot(SCREENSHOTS.resolve(testName + "-" + name + ".png"));
  }
}
