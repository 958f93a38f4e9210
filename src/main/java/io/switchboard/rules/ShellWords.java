package io.switchboard.rules;

import java.util.ArrayList;
import java.util.List;

/**
 * A command line split into words, conservatively: a command qualifies for a rule only when it is
 * one plain command. Any shell metacharacter ({@code ; & | < > $ ` ( )}, a backslash, a newline)
 * makes it unsplittable (null): {@code git status && rm -rf ~} is two commands, {@code $(...)} runs
 * one of its own, and a rule about {@code git status} must not answer for either. Single and double
 * quotes group words, with nothing expanded inside them (a {@code $} inside double quotes is refused).
 */
public final class ShellWords {
  private static final String METACHARACTERS = ";&|<>$`()\\\n\r";

  private ShellWords() {}

  /** The words, or null when the line is not one plain command. */
  public static List<String> split(String line) {
    if (line == null) {
      return null;
    }
    List<String> words = new ArrayList<>();
    StringBuilder word = null;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else if (c == '\n' || c == '\r' || quote == '"' && (c == '$' || c == '`' || c == '\\')) {
          return null;
        } else {
          word.append(c);
        }
      } else if (METACHARACTERS.indexOf(c) >= 0 || c == '*' || c == '?' || c == '[' || c == '~' || c == '{'
          || c == '#' || c == '!') {
        // Globs, ~, braces, comments and history expand in a shell: not what the rule read.
        return null;
      } else if (c == '\'' || c == '"') {
        quote = c;
        if (word == null) {
          word = new StringBuilder();
        }
      } else if (c == ' ' || c == '\t') {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
      } else {
        if (word == null) {
          word = new StringBuilder();
        }
        word.append(c);
      }
    }
    if (quote != 0) {
      return null;
    }
    if (word != null) {
      words.add(word.toString());
    }
    return words.isEmpty() ? null : words;
  }

  /** Words that run the words after them: a deny must see through them. */
  private static final java.util.Set<String> WRAPPERS = java.util.Set.of("sudo", "doas", "env", "command", "exec",
      "nohup", "time", "nice", "ionice", "timeout", "xargs", "builtin", "eval", "then", "do", "else", "!", "{");
  private static final java.util.Set<String> SHELLS = java.util.Set.of("sh", "bash", "zsh", "dash", "ksh");
  /** git's options before its subcommand, and those of them that take the next word. */
  private static final java.util.Set<String> GIT_VALUED = java.util.Set.of("-C", "-c", "--git-dir", "--work-tree",
      "--namespace", "--exec-path", "--config-env");

  /**
   * Whether {@code text} may run {@code command} (its first words) anywhere in it, read loosely, as a
   * deny must: every part between shell operators, quotes dropped, past {@code VAR=value}, wrappers
   * ({@code sudo}, {@code env}, {@code bash -c}, ...), a program's folder and git's global options.
   * It errs towards yes: a deny it answers for covers what might run, not only what surely does.
   */
  public static boolean mentions(String text, List<String> command) {
    if (text == null || command.isEmpty()) {
      return false;
    }
    for (String part : text.split("[;&|<>()`$\\n\\r{}]+")) {
      List<String> words = new ArrayList<>();
      for (String w : part.replace("'", " ").replace("\"", " ").replace("\\", "").trim().split("[ \\t]+")) {
        if (!w.isEmpty()) {
          words.add(w);
        }
      }
      for (int start = 0; start < words.size(); start++) {
        if (startsWith(words.subList(start, words.size()), command)) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean startsWith(List<String> words, List<String> command) {
    int i = 0;
    while (i < words.size() && (words.get(i).matches("[A-Za-z_][A-Za-z0-9_]*=.*") || WRAPPERS.contains(
        words.get(i)) || words.get(i).startsWith("-") && i > 0 && WRAPPERS.contains(words.get(i - 1))
        || SHELLS.contains(base(words.get(i))))) {
      i++;
    }
    if (i >= words.size() || !base(words.get(i)).equals(base(command.get(0)))) {
      return false;
    }
    int w = i + 1;
    int c = 1;
    if (base(command.get(0)).equals("git")) {
      while (w < words.size() && words.get(w).startsWith("-") && (c >= command.size()
          || !words.get(w).equals(command.get(c)))) {
        w += GIT_VALUED.contains(words.get(w)) ? 2 : 1;
      }
    }
    for (; c < command.size(); c++, w++) {
      if (w >= words.size() || !words.get(w).equals(command.get(c))) {
        return false;
      }
    }
    return true;
  }

  private static String base(String word) {
    int slash = word.lastIndexOf('/');
    return slash >= 0 && slash < word.length() - 1 ? word.substring(slash + 1) : word;
  }
}
