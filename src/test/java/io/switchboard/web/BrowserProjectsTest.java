package io.switchboard.web;

import static io.switchboard.testkit.PermissionHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.AgentHarness;
import io.switchboard.testkit.GatewayHarness;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;

/**
 * Projects in a real browser: threads in a git worktree each, merged, discarded or kept from a
 * phone and a desktop, and a session begun in a terminal continued from the page (Chromium, as in
 * {@link BrowserChatTest}).
 */
class BrowserProjectsTest extends BrowserGatewayClass {
  @Test
  void twoThreadsInAProjectOneMergedOneDiscardedOnAPhone(Vertx vertx) throws Exception {
    workInAProject(vertx, 390, 844);
  }

  @Test
  void twoThreadsInAProjectOneMergedOneDiscardedOnADesktop(Vertx vertx) throws Exception {
    workInAProject(vertx, 1280, 900);
  }

  private void workInAProject(Vertx vertx, int width, int height) throws Exception {
    Path repo = withAProject(vertx, List.of(AgentHarness.demo()));
    boolean phone = width < 760;
    browser.manage().window().setSize(new Dimension(width, height));
    logIn();
    JavascriptExecutor js = (JavascriptExecutor) browser;
    String[] notes = {"the first thread's note at " + width, "the second thread's note at " + width};
    String[] branches = new String[2];
    List<String> ids = new java.util.ArrayList<>();
    for (int n = 0; n < 2; n++) {
      int i = n;
      showNewThreadForm(phone);
      org.openqa.selenium.support.ui.Select project = new org.openqa.selenium.support.ui.Select(
          browser.findElement(By.id("project-select")));
      assertEquals("App", project.getFirstSelectedOption().getText(), "the default project, chosen");
      assertEquals(List.of("App", "No project (scratch folder)"), project.getOptions().stream()
          .map(WebElement::getText).toList());
      WebElement branch = browser.findElement(By.id("branch-input"));
      for (WebElement control : List.of(project.getWrappedElement(), branch,
          browser.findElement(By.cssSelector("#new-thread button")))) {
        assertTrue(control.getSize().getHeight() >= 44, "a 44 px target: " + control.getDomAttribute("id"));
        assertTrue(inWindow(control), "inside the window: " + control.getDomAttribute("id"));
      }
      if (i == 0) {
        branch.sendKeys("notes-" + width);
      }
      if (i == 0) {
        screenshot("project-picker");
      }
      browser.findElement(By.cssSelector("#new-thread button")).click();
      int listed = i + 1;
      waiting().until(d -> threadIds().size() == listed && d.findElement(By.id("input")).isEnabled()
          && d.findElement(By.id("project-bar")).isDisplayed());
      String id = threadIds().stream().filter(t -> !ids.contains(t)).findFirst().orElseThrow();
      ids.add(id);
      // The header names the project and the thread's branch, a real branch of the repository.
      String header = browser.findElement(By.id("thread-project")).getText();
      assertTrue(header.startsWith("App \u00b7 "), header);
      branches[i] = header.substring("App \u00b7 ".length());
      if (i == 0) {
        assertEquals("notes-" + width, branches[i]);
        // The same branch name again: refused, and the form says why in words.
        showNewThreadForm(phone);
        browser.findElement(By.id("branch-input")).sendKeys("notes-" + width);
        browser.findElement(By.cssSelector("#new-thread button")).click();
        String refused = waiting().until(d -> {
          String t = d.findElement(By.id("new-thread-status")).getText();
          return t.contains("already exists") ? t : null;
        });
        assertTrue(refused.contains("notes-" + width), refused);
        assertEquals(1, threadIds().size());
        browser.findElement(By.id("branch-input")).clear();
        if (phone) {
          new org.openqa.selenium.interactions.Actions(browser).sendKeys(Keys.ESCAPE).perform();
          waiting().until(d -> !inWindow(d.findElement(By.cssSelector("#new-thread button"))));
        }
      } else {
        assertTrue(branches[i].startsWith("switchboard/"), branches[i]);
      }
      assertTrue(gitOk(repo, "rev-parse", "--verify", "-q", "refs/heads/" + branches[i]), branches[i]);
      assertTrue(inWindow(browser.findElement(By.id("changes-open"))), "the Changes button is on screen");
      assertTrue(browser.findElements(By.cssSelector("#threads .project")).stream()
          .anyMatch(p -> "App".equals(p.getDomProperty("textContent"))), "the thread list labels the project");

      say(notes[i]);
      click(awaitCard(), "Allow once");
      verdict();
      waiting().until(d -> !d.findElement(By.id("busy")).isDisplayed() && d.findElements(By.cssSelector(".msg.agent"))
          .stream().anyMatch(m -> m.getText().contains("your note is in demo-notes.md")));
      if (i == 0) {
        assertTrue(inWindow(browser.findElement(By.id("thread-title"))), "the title keeps its place beside the agent's mode");
        assertTrue(inWindow(browser.findElement(By.id("thread-project"))));
        screenshot("thread-header");
      }
    }

    // Each thread's Changes: its note, in its own worktree. The first is committed and merged, the second discarded.
    for (int n = 0; n < 2; n++) {
      int i = n;
      String id = ids.get(i);
      if (!browser.findElement(By.id("thread-title")).getText().equals(notes[i])) {
        if (phone) {
          browser.findElement(By.id("menu")).click();
        }
        WebElement row = waiting().until(d -> d.findElements(By.cssSelector("#threads button")).stream()
            .filter(b -> b.getText().contains(notes[i]) && inWindow(b)).findFirst().orElse(null));
        row.click();
        waiting().until(d -> d.findElement(By.id("thread-title")).getText().equals(notes[i]));
      }
      browser.findElement(By.id("changes-open")).click();
      WebElement file = waiting().until(d -> {
        List<WebElement> f = d.findElements(By.cssSelector("#changes-files li.changed-file[data-path='demo-notes.md']"));
        return f.isEmpty() || !f.get(0).isDisplayed() ? null : f.get(0);
      });
      WebElement added = file.findElements(By.cssSelector(".diff .add")).stream()
          .filter(r -> r.getText().contains(notes[i])).findFirst().orElseThrow();
      waiting().until(d -> inWindow(file.findElement(By.cssSelector("summary"))) && inWindow(added));
      assertEquals("+3 \u22120", file.findElement(By.cssSelector(".file-counts")).getText(), file.getText());
      assertEquals(branches[i] + " \u2192 main", browser.findElement(By.id("changes-branch")).getText());
      assertEquals("no commits ahead of main \u00b7 1 file not committed",
          browser.findElement(By.id("changes-counts")).getText());
      for (String button : List.of("commit", "merge", "discard", "changes-close")) {
        WebElement b = browser.findElement(By.id(button));
        assertTrue(inWindow(b) && b.getSize().getHeight() >= 44, button + " is a 44 px target on screen");
      }
      if (phone) {
        WebElement sheet = browser.findElement(By.id("changes"));
        assertEquals(width, sheet.getSize().getWidth(), "a full-screen sheet on a phone");
      } else {
        assertTrue(inWindow(browser.findElement(By.id("input"))), "beside the thread on a desktop");
      }
      long overflow = (Long) js.executeScript(
          "return document.documentElement.scrollWidth - document.documentElement.clientWidth");
      assertTrue(overflow <= 0, "no sideways scrolling: " + overflow);
      screenshot("changes-" + (i + 1));

      if (i == 0) {
        assertEquals("Work from thread \"" + notes[0] + "\"",
            browser.findElement(By.id("commit-message")).getDomProperty("value"));
        browser.findElement(By.id("commit")).click();
        waiting().until(d -> d.findElement(By.id("changes-note")).getText().startsWith("Committed as "));
        waiting().until(d -> "1 commit ahead of main \u00b7 nothing left to commit".equals(
            d.findElement(By.id("changes-counts")).getText()));
        assertEquals("Merge into main", browser.findElement(By.id("merge")).getText());
        browser.findElement(By.id("merge")).click();
        String merged = waiting().until(d -> {
          String t = d.findElement(By.id("changes-note")).getText();
          return t.startsWith("Merged into main as ") ? t : null;
        });
        assertTrue(merged.endsWith("(one squashed commit)."), merged);
        waiting().until(d -> d.findElements(By.cssSelector("#changes-audit li")).stream()
            .anyMatch(li -> li.getText().startsWith("merged into main by web at ")));
        screenshot("merged");
        browser.findElement(By.id("changes-close")).click();
        waiting().until(d -> !d.findElement(By.id("changes")).isDisplayed());
        // The thread says it too, as it says every person's action.
        waiting().until(d -> d.findElements(By.cssSelector(".msg.system")).stream()
            .anyMatch(m -> m.getText().startsWith("Merged " + branches[0] + " into main as ")));
      } else {
        browser.findElement(By.id("discard")).click();
        org.openqa.selenium.Alert confirm = waiting().until(
            org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
        assertTrue(confirm.getText().contains("refs/switchboard/archive/" + id), confirm.getText());
        confirm.accept();
        String discarded = waiting().until(d -> {
          String t = d.findElement(By.id("changes-note")).getText();
          return t.startsWith("Discarded") ? t : null;
        });
        assertTrue(discarded.contains("refs/switchboard/archive/" + id), discarded);
        assertTrue(browser.findElement(By.id("discard")).getDomProperty("disabled").equals("true"),
            "nothing more to do with a discarded thread's work");
        screenshot("discarded");
        browser.findElement(By.id("changes-close")).click();
        // Archived: the page is on the first thread again.
        waiting().until(d -> !d.findElement(By.id("changes")).isDisplayed()
            && d.findElement(By.id("thread-title")).getText().equals(notes[0]));
      }
    }

    // The repository: main has the first thread's note only; the second's worktree and branch are
    // gone, its work kept under refs/switchboard/archive/<thread>.
    String onMain = git(repo, "show", "main:demo-notes.md");
    assertTrue(onMain.contains(notes[0]), onMain);
    assertFalse(onMain.contains(notes[1]), onMain);
    // The merged thread goes on (its worktree stays, on its branch, now at what was merged); the
    // discarded one's worktree is gone.
    String trees = git(repo, "worktree", "list", "--porcelain");
    assertEquals(List.of("worktree " + repo.toRealPath()), trees.lines()
        .filter(l -> l.startsWith("worktree ") && !l.contains(ids.get(0))).toList(), trees);
    assertEquals(List.of("branch refs/heads/main", "branch refs/heads/" + branches[0]), trees.lines()
        .filter(l -> l.startsWith("branch ")).toList(), trees);
    assertFalse(trees.contains(ids.get(1)), trees);
    assertEquals(git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", branches[0]).strip(),
        "the first thread's branch goes on from the merge");
    assertFalse(gitOk(repo, "rev-parse", "--verify", "-q", "refs/heads/" + branches[1]), "the discarded branch is gone");
    assertTrue(gitOk(repo, "rev-parse", "--verify", "-q", "refs/switchboard/archive/" + ids.get(1)));
    assertTrue(git(repo, "show", "refs/switchboard/archive/" + ids.get(1) + ":demo-notes.md").contains(notes[1]));

    // The first thread's Changes (after a reload too) name who merged it.
    browser.navigate().refresh();
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent"))
        && d.findElement(By.id("project-bar")).isDisplayed());
    assertEquals("App \u00b7 " + branches[0], browser.findElement(By.id("thread-project")).getText());
    browser.findElement(By.id("changes-open")).click();
    List<String> audit = waiting().until(d -> {
      List<String> items = d.findElements(By.cssSelector("#changes-audit li")).stream().map(WebElement::getText).toList();
      return items.size() == 2 ? items : null;
    });
    assertTrue(audit.get(0).startsWith("merged into main by web at "), audit.toString());
    assertTrue(audit.get(1).startsWith("committed by web at "), audit.toString());
    assertEquals("no commits ahead of main \u00b7 nothing left to commit",
        browser.findElement(By.id("changes-counts")).getText());
    assertTrue(browser.findElement(By.id("merge")).getDomProperty("disabled").equals("true"), "nothing left to merge");
    screenshot("audit");
  }

  /**
   * This test's gateway again, with these agents (the first the default) and one project, App (a
   * worktree per thread), on a new git repository with one commit on main; returns the repository.
   */
  private Path withAProject(Vertx vertx, List<io.switchboard.config.AgentSpec> agents) throws Exception {
    gateway.close();
    Path repo = Files.createDirectories(dir.resolve("repo"));
    git(repo, "init", "-q", "-b", "main");
    Files.writeString(repo.resolve("README.md"), "# The app\n");
    git(repo, "add", "README.md");
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "The first commit");
    io.switchboard.config.Settings base = new io.switchboard.config.Settings(
        new io.switchboard.config.Settings.Http("127.0.0.1", 0, List.of(), false), dir.resolve("data-projects"),
        agents.get(0).id(), agents, List.of(), io.switchboard.config.Settings.LogFormat.TEXT);
    gateway = new GatewayHarness(vertx, GatewayHarness.withProjects(base, List.of(new io.switchboard.config.ProjectSpec(
        "app", "App", repo, List.of(), io.switchboard.config.ProjectSpec.Worktrees.PER_THREAD, null, null, null, null))),
        io.switchboard.Gateway.Tuning.DEFAULT);
    return repo;
  }

  /**
   * A session begun in a terminal in the project's folder, continued from a phone: the picker lists
   * the agent's sessions there (and says so of an agent that lists none), one tapped opens as a
   * thread with its history as a conversation, goes on with the next message, and is there after a
   * reload.
   */
  @Test
  void aSessionBegunInATerminalIsContinuedFromAPhone(Vertx vertx) throws Exception {
    Path script = Path.of("src", "test", "badpeers", "bad-agent.js").toAbsolutePath();
    Path repo = withAProject(vertx, List.of(AgentHarness.demo(), new io.switchboard.config.AgentSpec("lister", "Lister",
        null, List.of("node", script.toString(), "sessions"), java.util.Map.of(), null, null)));
    browser.manage().window().setSize(new Dimension(390, 844));
    logIn();
    showNewThreadForm(true);
    org.openqa.selenium.support.ui.Select agent = new org.openqa.selenium.support.ui.Select(
        browser.findElement(By.id("agent-select")));
    assertEquals("App", new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("project-select")))
        .getFirstSelectedOption().getText());
    WebElement open = browser.findElement(By.id("sessions-open"));
    assertTrue(inWindow(open) && open.getSize().getHeight() >= 44, "Continue a session is a 44 px target on screen");
    assertEquals("Continue a session\u2026", open.getText());
    // The built-in demo agent lists no sessions: said in words.
    open.click();
    waiting().until(d -> d.findElement(By.id("sessions-note")).getText().equals("This agent does not list its sessions."));
    assertEquals(0, browser.findElements(By.cssSelector("#sessions-list li")).size());
    // Another agent: that list closes; Lister's lists its two sessions in App's folder.
    agent.selectByVisibleText("Lister");
    waiting().until(d -> !d.findElement(By.id("sessions")).isDisplayed());
    open.click();
    List<WebElement> sessions = waiting().until(d -> {
      List<WebElement> b = d.findElements(By.cssSelector("#sessions-list button"));
      return b.size() == 2 ? b : null;
    });
    assertTrue(sessions.get(0).getText().startsWith("Fix the login bug"), sessions.get(0).getText());
    assertTrue(sessions.get(1).getText().startsWith("Write the README"), sessions.get(1).getText());
    for (WebElement b : sessions) {
      assertTrue(inWindow(b) && b.getSize().getHeight() >= 44, "a 44 px target on screen: " + b.getText());
      assertTrue(b.findElement(By.cssSelector(".session-when")).getText().startsWith("updated "), b.getText());
    }
    assertTrue(browser.findElement(By.id("sessions-note")).getText().startsWith("Begun in App with Lister"));
    assertFalse(browser.findElement(By.id("sessions-more")).isDisplayed(), "one page only: no Load more");
    long overflow = (Long) ((JavascriptExecutor) browser).executeScript(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth");
    assertTrue(overflow <= 0, "no sideways scrolling: " + overflow);
    screenshot("sessions");

    sessions.get(0).click();
    // The thread opens on the session (the menu closes), its replayed history a conversation.
    waiting().until(d -> d.findElement(By.id("thread-title")).getText().equals("Fix the login bug")
        && d.findElement(By.id("input")).isEnabled() && inWindow(d.findElement(By.id("input"))));
    String answer = "I fixed it in login.js, in " + repo.toRealPath() + ".";
    List<String> said = List.of("user:Please fix the login bug (term-login)", "agent:" + answer);
    waiting().until(d -> conversation().equals(said));
    WebElement question = browser.findElement(By.cssSelector("#log .msg.user"));
    assertTrue(inWindow(question), "the replayed question is on screen");
    assertEquals(1, threadIds().size());
    screenshot("continued");
    say("and add a test");
    waiting().until(d -> conversation().contains("agent:continuing term-login: and add a test"));
    assertEquals(List.of(said.get(0), said.get(1), "user:and add a test", "agent:continuing term-login: and add a test"),
        conversation());

    browser.navigate().refresh();
    waiting().until(d -> "connected".equals(d.findElement(By.id("conn")).getDomProperty("textContent"))
        && d.findElement(By.id("thread-title")).getText().equals("Fix the login bug"));
    waiting().until(d -> conversation().size() == 4);
    assertEquals(List.of(said.get(0), said.get(1), "user:and add a test", "agent:continuing term-login: and add a test"),
        conversation(), "the history after a reload");
    screenshot("after-reload");
  }

  /** The open thread's messages in order: "user:…" or "agent:…" each. */
  @SuppressWarnings("unchecked")
  private List<String> conversation() {
    return (List<String>) ((JavascriptExecutor) browser).executeScript("return [...document.querySelectorAll("
        + "'#log .msg.user, #log .msg.agent')].map(m => (m.classList.contains('user') ? 'user:' : 'agent:')"
        + " + m.textContent.trim());");
  }

  /**
   * A thread with a note not committed in its worktree: archiving it asks first, naming what would be
   * left behind (cancelled, it stays; confirmed, it goes), and deleting it then says its worktree is
   * discarded and where its work is kept.
   */
  @Test
  void archivingOrDeletingAThreadWithWorkNotCommittedAsksFirst(Vertx vertx) throws Exception {
    Path repo = withAProject(vertx, List.of(AgentHarness.demo()));
    String id = aProjectThreadWithANote("a note to keep");

    browser.findElement(By.id("archive")).click();
    org.openqa.selenium.Alert confirm = waiting().until(
        org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
    String asked = confirm.getText();
    assertTrue(asked.startsWith("This thread has 1 file not committed. Archive it anyway?"), asked);
    assertTrue(asked.contains("Its worktree is kept; Discard in Changes throws the work away (kept under "
        + "refs/switchboard/archive/" + id + ")"), asked);
    confirm.dismiss();
    waiting().until(d -> d.findElement(By.id("toast")).isDisplayed()
        && d.findElement(By.id("toast")).getText().equals("Not archived."));
    assertEquals(1, browser.findElements(By.cssSelector("#threads li")).size(), "cancelled: still listed");
    assertFalse(browser.findElement(By.id("archived")).isDisplayed());

    browser.findElement(By.id("archive")).click();
    confirm = waiting().until(org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
    assertTrue(confirm.getText().contains("1 file not committed"), confirm.getText());
    confirm.accept();
    waiting().until(d -> d.findElements(By.cssSelector("#threads li")).isEmpty()
        && d.findElement(By.id("archived")).isDisplayed());
    assertEquals("Archived (1)", browser.findElement(By.id("archived-count")).getText());

    // Deleting it discards its worktree: said first; the work is kept under the archive ref.
    browser.findElement(By.id("archived-count")).click();
    waiting().until(d -> d.findElement(By.cssSelector("#archived-threads .delete")).isDisplayed());
    browser.findElement(By.cssSelector("#archived-threads .delete")).click();
    confirm = waiting().until(org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
    String deleting = confirm.getText();
    assertTrue(deleting.startsWith("This thread has 1 file not committed. Delete it for good anyway?"), deleting);
    assertTrue(deleting.contains("discards its worktree and its branch; the work is kept in the repository under "
        + "refs/switchboard/archive/" + id), deleting);
    confirm.accept();
    waiting().until(d -> !d.findElement(By.id("archived")).isDisplayed());
    waitFor(() -> threadIds().isEmpty(), "the thread to be deleted");
    assertTrue(git(repo, "show", "refs/switchboard/archive/" + id + ":demo-notes.md").contains("a note to keep"));
    assertFalse(git(repo, "worktree", "list", "--porcelain").contains(id), "its worktree is gone");
  }

  @Test
  void keepingABranchCommitsWhatIsLeftAndLeavesTheBranchUnmerged(Vertx vertx) throws Exception {
    Path repo = withAProject(vertx, List.of(AgentHarness.demo()));
    String id = aProjectThreadWithANote("a note worth a branch");
    browser.findElement(By.id("changes-open")).click();
    waiting().until(d -> d.findElement(By.id("keep")).isDisplayed() && d.findElement(By.id("keep")).isEnabled());
    assertTrue(inWindow(browser.findElement(By.id("keep"))), "Keep branch is on screen");
    browser.findElement(By.id("keep")).click();
    org.openqa.selenium.Alert confirm = waiting().until(
        org.openqa.selenium.support.ui.ExpectedConditions.alertIsPresent());
    assertTrue(confirm.getText().contains("without merging it?"), confirm.getText());
    confirm.accept();
    waiting().until(d -> d.findElement(By.id("changes-note")).getText().startsWith("Kept on branch switchboard/"));
    String branch = git(repo, "worktree", "list").lines().count() == 1
        ? git(repo, "branch", "--list", "switchboard/*").strip() : null;
    assertTrue(branch != null && branch.startsWith("switchboard/"), "the worktree gone, the branch left: " + branch);
    assertTrue(git(repo, "show", branch + ":demo-notes.md").contains("a note worth a branch"));
    assertFalse(gitOk(repo, "cat-file", "-e", "main:demo-notes.md"), "nothing merged into main");
    waitFor(() -> browser.findElements(By.cssSelector("#threads li")).isEmpty(), "the kept thread to be archived");
    assertTrue(git(repo, "log", "-1", "--format=%B", branch).contains("Switchboard-Committed-By: web"),
        "the work not committed was committed by the gateway, for the person on the page (thread " + id + ")");
  }

  /** Logs in, starts a thread in the default project, and has the demo agent write {@code note} (allowed). */
  private String aProjectThreadWithANote(String note) {
    logIn();
    browser.findElement(By.cssSelector("#new-thread button")).click();
    waiting().until(d -> threadIds().size() == 1 && d.findElement(By.id("input")).isEnabled()
        && d.findElement(By.id("project-bar")).isDisplayed());
    String id = threadIds().get(0);
    say(note);
    click(awaitCard(), "Allow once");
    waiting().until(d -> !d.findElement(By.id("busy")).isDisplayed() && d.findElements(By.cssSelector(".msg.agent"))
        .stream().anyMatch(m -> m.getText().contains("your note is in demo-notes.md")));
    return id;
  }

  /** The new-thread form on screen: in the menu on a phone. */
  private void showNewThreadForm(boolean phone) {
    if (phone && !browser.findElement(By.id("app")).getDomAttribute("class").contains("menu-open")) {
      browser.findElement(By.id("menu")).click();
    }
    waiting().until(d -> inWindow(d.findElement(By.cssSelector("#new-thread button"))));
  }

  private static String git(Path repo, String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("git", "-C", repo.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new AssertionError(String.join(" ", command) + " failed: " + out);
    }
    return out;
  }

  private static boolean gitOk(Path repo, String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("git", "-C", repo.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor() == 0;
  }
}
