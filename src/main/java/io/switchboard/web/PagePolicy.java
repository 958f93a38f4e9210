package io.switchboard.web;

import io.vertx.ext.web.handler.CSPHandler;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Content-Security-Policy every response carries. Scripts come from this origin only, plus the
 * inline scripts of the served index.html named by their SHA-256 (its import map, which the build
 * writes and a browser will not load from a file): any other inline script is refused. The service
 * worker ({@code /sw.js}) and the web app manifest come from this origin too.
 */
final class PagePolicy {
  private static final Pattern INLINE_SCRIPT =
      Pattern.compile("<script(?![^>]*\\bsrc=)[^>]*>(.*?)</script>", Pattern.DOTALL | Pattern.CASE_INSENSITIVE);

  private PagePolicy() {
  }

  /**
   * vertx-web's CSP handler with the policy for a page whose index.html is {@code indexHtml}
   * (its default {@code default-src 'self'} first, then these directives in this order).
   */
  static CSPHandler forPage(String indexHtml) {
    StringBuilder scripts = new StringBuilder("'self'");
    Matcher m = INLINE_SCRIPT.matcher(indexHtml);
    while (m.find()) {
      scripts.append(" 'sha256-").append(sha256(m.group(1))).append('\'');
    }
    return CSPHandler.create().addDirective("script-src", scripts.toString()).addDirective("style-src", "'self'")
        .addDirective("img-src", "'self' data:").addDirective("media-src", "data:")
        .addDirective("connect-src", "'self'").addDirective("font-src", "'self'")
        .addDirective("worker-src", "'self'").addDirective("manifest-src", "'self'")
        .addDirective("object-src", "'none'").addDirective("base-uri", "'none'")
        .addDirective("form-action", "'self'").addDirective("frame-ancestors", "'none'");
  }

  private static String sha256(String script) {
    return Base64.getEncoder().encodeToString(io.switchboard.common.Sha256.of(script));
  }
}
