package io.switchboard.web;

import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Content-Security-Policy every response carries. Scripts come from this origin only, plus the
 * inline scripts of the served index.html named by their SHA-256 (its import map, which the build
 * writes and a browser will not load from a file): any other inline script is refused.
 */
final class PagePolicy {
  private static final Pattern INLINE_SCRIPT =
      Pattern.compile("<script(?![^>]*\\bsrc=)[^>]*>(.*?)</script>", Pattern.DOTALL | Pattern.CASE_INSENSITIVE);

  private PagePolicy() {
  }

  /** The policy for a page whose index.html is {@code indexHtml}. */
  static String forPage(String indexHtml) {
    StringBuilder scripts = new StringBuilder("'self'");
    Matcher m = INLINE_SCRIPT.matcher(indexHtml);
    while (m.find()) {
      scripts.append(" 'sha256-").append(sha256(m.group(1))).append('\'');
    }
    return "default-src 'self'; script-src " + scripts + "; style-src 'self'; img-src 'self' data:; media-src data:; "
        + "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        + "frame-ancestors 'none'";
  }

  private static String sha256(String script) {
    return Base64.getEncoder().encodeToString(io.switchboard.common.Sha256.of(script));
  }
}
