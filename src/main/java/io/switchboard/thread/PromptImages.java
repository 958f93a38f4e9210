package io.switchboard.thread;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Base64;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The images a person attaches to a prompt, checked before anything is recorded: at most
 * {@link #MAX_IMAGES}, each PNG, JPEG, GIF or WebP whose own header says it is one
 * ({@link ImageHeaders}), at most {@link #MAX_IMAGE_BYTES} and {@link #MAX_PIXELS}, with an
 * optional small preview for the transcript. The agent gets the images whole; the transcript keeps
 * only the previews (a thread's replay stays small).
 */
final class PromptImages {
  static final int MAX_IMAGES = 4;
  /** What one image may weigh decoded: a chat frame is 1 MiB, base64 makes 3 bytes into 4. */
  static final int MAX_IMAGE_BYTES = 700 * 1024;
  /** What a preview may weigh decoded: it is replayed with the thread. */
  static final int MAX_PREVIEW_BYTES = 48 * 1024;
  /**
   * Pixels an image may declare: 40 megapixels (8000x5000) is 160 MB at 4 bytes a pixel, what one
   * decode in a browser tab or an agent can bear; a few KiB that claim more are a decompression bomb.
   */
  static final long MAX_PIXELS = 40_000_000;
  /**
   * Pixels a preview may declare: every tab that opens the thread decodes it again, so 2048x2048
   * (16 MiB at 4 bytes a pixel); the page's own previews are 240 pixels a side.
   */
  static final long MAX_PREVIEW_PIXELS = 2048 * 2048;
  private static final Set<String> KINDS = Set.of("image/png", "image/jpeg", "image/gif", "image/webp");
  private static final Pattern PREVIEW = Pattern.compile("data:(image/(?:png|jpeg|webp));base64,([A-Za-z0-9+/=]+)");

  /** What the agent is sent ({@code [{mimeType, data}]}) and what the transcript keeps of each. */
  record Checked(JsonArray forAgent, JsonArray forTranscript) {
    boolean isEmpty() {
      return forAgent.isEmpty();
    }
  }

  private PromptImages() {
  }

  /** Checks {@code images} (absent: none); the message of the exception names what is wrong. */
  static Checked check(Object images) {
    JsonArray forAgent = new JsonArray();
    JsonArray forTranscript = new JsonArray();
    if (images == null) {
      return new Checked(forAgent, forTranscript);
    }
    if (!(images instanceof JsonArray list)) {
      throw new IllegalArgumentException("images must be a list of {mimeType, data, preview?}");
    }
    if (list.size() > MAX_IMAGES) {
      throw new IllegalArgumentException("a message may carry at most " + MAX_IMAGES + " images, not " + list.size());
    }
    for (int i = 0; i < list.size(); i++) {
      String which = "image " + (i + 1);
      if (!(list.getValue(i) instanceof JsonObject image) || !(image.getValue("mimeType") instanceof String mime)
          || !(image.getValue("data") instanceof String data)) {
        throw new IllegalArgumentException(which + " must be {mimeType, data (base64), preview?}");
      }
      if (!KINDS.contains(mime)) {
        throw new IllegalArgumentException(which + " is " + mime + "; PNG, JPEG, GIF and WebP are taken");
      }
      byte[] bytes = decode(data, which);
      if (bytes.length == 0 || bytes.length > MAX_IMAGE_BYTES) {
        throw new IllegalArgumentException(which + " has " + bytes.length + " bytes; at most " + MAX_IMAGE_BYTES / 1024
            + " KiB are taken (the page scales a larger one down)");
      }
      ImageHeaders.Size size = size(which, mime, bytes);
      if (size.pixels() > MAX_PIXELS) {
        throw new IllegalArgumentException(which + " declares " + size + " pixels; at most " + MAX_PIXELS / 1_000_000
            + " megapixels are taken (the page scales a larger one down)");
      }
      JsonObject kept = new JsonObject().put("mimeType", mime).put("bytes", bytes.length);
      Object preview = image.getValue("preview");
      if (preview != null) {
        var m = preview instanceof String s ? PREVIEW.matcher(s) : null;
        if (m == null || !m.matches()) {
          throw new IllegalArgumentException(which + "'s preview must be a data:image/png, jpeg or webp base64 URL");
        }
        byte[] small = decode(m.group(2), which + "'s preview");
        if (small.length > MAX_PREVIEW_BYTES) {
          throw new IllegalArgumentException(which + "'s preview must be a " + m.group(1) + " of at most "
              + MAX_PREVIEW_BYTES / 1024 + " KiB");
        }
        ImageHeaders.Size shown = size(which + "'s preview", m.group(1), small);
        if (shown.pixels() > MAX_PREVIEW_PIXELS) {
          throw new IllegalArgumentException(which + "'s preview declares " + shown + " pixels; a preview may have "
              + "at most 2048\u00d72048 (" + MAX_PREVIEW_PIXELS + ")");
        }
        kept.put("preview", preview);
      } else if (bytes.length <= MAX_PREVIEW_BYTES && size.pixels() <= MAX_PREVIEW_PIXELS) {
        kept.put("preview", "data:" + mime + ";base64," + data); // small in bytes and in pixels: its own preview
      }
      forAgent.add(new JsonObject().put("mimeType", mime).put("data", data));
      forTranscript.add(kept);
    }
    return new Checked(forAgent, forTranscript);
  }

  private static byte[] decode(String base64, String which) {
    try {
      return Base64.getDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(which + " is not valid base64: " + e.getMessage());
    }
  }

  /** What the image's own header declares; else an error naming the image and what its header lacks. */
  private static ImageHeaders.Size size(String which, String mime, byte[] bytes) {
    try {
      return ImageHeaders.read(mime, bytes);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(which + " says " + mime + " but " + e.getMessage());
    }
  }
}
