package io.switchboard.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/** Debian's Chromium, headless, driven through Debian's chromedriver (scripts/test.sh installs both). */
public final class Chromium {
  private Chromium() {}

  /** A browser with its profile in {@code profile}, its window 1280x900. */
  public static ChromeDriver start(Path profile) throws Exception {
    return start(profile, new String[0]);
  }

  /** The same with more command-line switches (a host name mapped to 127.0.0.1, say). */
  public static ChromeDriver start(Path profile, String... moreArguments) throws Exception {
    for (String tool : List.of("/usr/bin/chromium", "/usr/bin/chromedriver")) {
      assertTrue(Files.isExecutable(Path.of(tool)), tool + " is missing: scripts/test.sh installs chromium and "
          + "chromium-driver with apt-get");
    }
    ChromeOptions options = new ChromeOptions().setBinary("/usr/bin/chromium").addArguments("--headless=new",
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
        // The page without motion (style.css): a waiting card's pulsing dot kept Chromium drawing, ~8 % of a core.
        "--force-prefers-reduced-motion",
        "--user-data-dir=" + Files.createDirectories(profile)).addArguments(moreArguments);
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new java.io.File("/usr/bin/chromedriver")).usingAnyFreePort().build();
    ChromeDriver browser = new ChromeDriver(service, options);
    browser.manage().window().setSize(new Dimension(1280, 900));
    return browser;
  }
}
