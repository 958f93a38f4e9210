package io.switchboard.project;

/**
 * File names an agent chose, shown so they cannot pass for others: a right-to-left override
 * ({@code readme\u202Ehs.txt} reads as "readmetxt.sh"), a newline that fakes a second entry, an
 * ANSI escape that repaints a terminal, a zero-width space between lookalikes. Every such character
 * is shown as {@code <U+XXXX>}; a name holding a control or direction character is refused at
 * Commit and Merge ({@link #lying}).
 */
final class FileNames {
  private FileNames() {}

  /** The name with each invisible, control or direction character written as {@code <U+XXXX>}. */
  static String visible(String name) {
    StringBuilder out = null;
    for (int i = 0; i < name.length(); ) {
      int cp = name.codePointAt(i);
      boolean hide = hidden(cp);
      if (hide && out == null) {
        out = new StringBuilder(name.length() + 16).append(name, 0, i);
      }
      if (out != null) {
        if (hide) {
          out.append(String.format("<U+%04X>", cp));
        } else {
          out.appendCodePoint(cp);
        }
      }
      i += Character.charCount(cp);
    }
    return out == null ? name : out.toString();
  }

  /** Whether the name holds a control character (C0, DEL, C1) or one that changes the text's direction. */
  static boolean lying(String name) {
    return name.codePoints().anyMatch(cp -> Character.getType(cp) == Character.CONTROL || direction(cp));
  }

  private static boolean hidden(int cp) {
    int type = Character.getType(cp);
    return type == Character.CONTROL || type == Character.FORMAT || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR || type == Character.UNASSIGNED || type == Character.PRIVATE_USE
        || type == Character.SURROGATE || direction(cp) || cp == 0x3164 || cp == 0x115F || cp == 0x1160
        || cp == 0xFFA0 || (Character.isWhitespace(cp) && cp != ' ') || Character.isSpaceChar(cp) && cp != ' ';
  }

  /** The bidirectional controls: embeddings, overrides, isolates and the marks. */
  private static boolean direction(int cp) {
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F
        || cp == 0x061C;
  }
}
