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
}
