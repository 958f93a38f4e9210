package io.switchboard.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The steps every browser test takes on the chat page, as a person would: log in with the token,
 * open the menu, type, wait for a card, and ask whether an element is inside the window.
 */
public final class PageDriver {
  private final ChromeDriver browser;

  public PageDriver(ChromeDriver browser) {
    this.browser = browser;
  }

  /**
   * Twenty seconds at most. The page redraws a tool box or a selector when the agent updates it:
   * an element found a moment ago may be gone, which is no failure (the wait looks again).
   */
  public WebDriverWait waiting() {
    return (WebDriverWait) new WebDriverWait(browser, Duration.ofSeconds(20))
        .ignoring(org.openqa.selenium.StaleElementReferenceException.class);
  }

  public Object script(String js, Object... args) {
    return ((JavascriptExecutor) browser).executeScript(js, args);
  }

  /** Runs {@code js} with {@code done} (the last argument) to call with its answer. */
  public Object async(String js, Object... args) {
    return ((JavascriptExecutor) browser).executeAsyncScript(js, args);
  }

  public void screenshot(Path file) throws Exception {
    Files.write(file, browser.getScreenshotAs(OutputType.BYTES));
  }

  /** Opens {@code url} and logs in with {@code token}; returns once the socket says connected. */
  public void logIn(String url, String token) {
    browser.get(url);
    WebElement field = waiting().until(d -> {
      WebElement t = d.findElement(By.id("token"));
      return t.isDisplayed() ? t : null;
    });
    field.sendKeys(token);
    browser.findElement(By.cssSelector("#login-form button")).click();
    // textContent: on a phone the sidebar holding it is off screen, and getText() sees only what shows.
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent")));
  }

  /** The phone's menu (the sidebar), open. */
  public void openMenu() {
    browser.findElement(By.id("menu")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#new-thread button")).isDisplayed());
  }

  /** The thread the page shows, from its own store. */
  public String currentThread() {
    return (String) async("const done = arguments[arguments.length - 1];"
        + "import('/js/state.js').then(m => done(m.store.state.current), () => done(null));");
  }

  public void say(String text) {
    WebElement input = browser.findElement(By.id("input"));
    input.sendKeys(text);
    input.sendKeys(Keys.ENTER);
  }

  /** The first card still waiting for an answer, once it shows its buttons. */
  public WebElement awaitCard() {
    return waiting().until(d -> d.findElements(By.cssSelector(".card:not(.resolved) .options button")).isEmpty()
        ? null : d.findElement(By.cssSelector(".card:not(.resolved)")));
  }

  /** Whether the element is wholly inside the window. */
  public boolean inView(WebElement e) {
    return (Boolean) script("const r = arguments[0].getBoundingClientRect(); return r.height > 0 && r.top >= 0 "
        + "&& r.bottom <= window.innerHeight && r.left >= 0 && r.right <= window.innerWidth;", e);
  }

  /** Leaves the gateway's page with nothing of it kept (storage, cookies): the next test's page starts afresh. */
  public void forget() {
    try {
      script("localStorage.clear(); sessionStorage.clear();");
    } catch (RuntimeException notOnTheGatewaysPage) {
      // nothing of the gateway's origin to clear
    }
    browser.get("about:blank");
    browser.manage().deleteAllCookies();
  }
}
