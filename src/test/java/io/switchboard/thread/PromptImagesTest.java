package io.switchboard.thread;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.testkit.TestImages;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * The images a person attaches: each kind's own header is read (never decoded) for the size it
 * declares, and what is not of its kind, or declares too many pixels, is refused naming why.
 */
class PromptImagesTest {
  /** Modernizr's WebP probes: real 1x1 images of each WebP flavour, as browsers make and read them. */
  private static final String[] WEBPS = {
      "UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA", // lossy (VP8)
      "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", // lossless (VP8L)
      "UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==",
      "UklGRlIAAABXRUJQVlA4WAoAAAASAAAAAAAAAAAAQU5JTQYAAAD/////AABBTk1GJgAAAAAAAAAAAAAAAAAAAGQAAABWUDhMDQAAAC8AAAAQBxAREYiI/gcA",
  };

  private static JsonArray one(String mime, byte[] bytes) {
    return new JsonArray().add(new JsonObject().put("mimeType", mime)
        .put("data", Base64.getEncoder().encodeToString(bytes)));
  }

  private static String refused(JsonArray images) {
    return assertThrows(IllegalArgumentException.class, () -> PromptImages.check(images)).getMessage();
  }

  private static byte[] bytes(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] le32(long v) {
    return bytes((int) v & 0xFF, (int) (v >> 8) & 0xFF, (int) (v >> 16) & 0xFF, (int) (v >> 24) & 0xFF);
  }

  @Test
  void realImagesOfEveryKindPassWithTheSizeTheirHeaderDeclares() {
    assertEquals("300\u00d7200", ImageHeaders.read("image/png", TestImages.png(300, 200)).toString());
    assertEquals("300\u00d7200", ImageHeaders.read("image/jpeg", TestImages.encoded("jpeg", 300, 200)).toString());
    assertEquals("300\u00d7200", ImageHeaders.read("image/gif", TestImages.encoded("gif", 300, 200)).toString());
    for (String webp : WEBPS) {
      assertEquals("1\u00d71", ImageHeaders.read("image/webp", Base64.getDecoder().decode(webp)).toString(), webp);
    }
    JsonArray all = new JsonArray().add(one("image/png", TestImages.png(300, 200)).getValue(0))
        .add(one("image/jpeg", TestImages.encoded("jpeg", 300, 200)).getValue(0))
        .add(one("image/gif", TestImages.encoded("gif", 300, 200)).getValue(0))
        .add(new JsonObject().put("mimeType", "image/webp").put("data", WEBPS[0]));
    PromptImages.Checked checked = PromptImages.check(all);
    assertEquals(4, checked.forAgent().size());
    assertTrue(checked.forTranscript().stream().map(JsonObject.class::cast).allMatch(i -> i.containsKey("preview")),
        "small images are their own previews: " + checked.forTranscript());
  }

  @Test
  void theProbesImagesAreRefusedNamingWhatIsWrong() {
    // What an attacker's probe sent: a video in a WebP's clothes, and a PNG of 3.8 KB declaring 60000x60000.
    byte[] avi = concat(ascii("RIFF"), le32(200), ascii("AVI LIST"), new byte[188]);
    String video = refused(one("image/webp", avi));
    assertTrue(video.contains("image 1 says image/webp but its RIFF container holds \"AVI \", not \"WEBP\""), video);
    byte[] bomb = TestImages.declaring(TestImages.noisePng(35, 35, 1), 60_000, 60_000);
    assertTrue(bomb.length < 4_000, "a small file: " + bomb.length);
    String declared = refused(one("image/png", bomb));
    assertTrue(declared.contains("image 1 declares 60000\u00d760000 pixels; at most 40 megapixels"), declared);
  }

  @Test
  void eachKindsHeaderIsCheckedAndItsDeclaredSizeBounded() {
    byte[] png = TestImages.png(30, 20);
    byte[] jfif = concat(bytes(0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10), ascii("JFIF\0"), new byte[9]);
    String[][] cases = {
        // kind, base64 bytes, what the error says
        {"image/jpeg", b64(png), "says image/jpeg but its bytes do not start like one"},
        {"image/png", b64(concat(java.util.Arrays.copyOf(png, 8), bytes(0, 0, 0, 13), ascii("IDAT"), new byte[17])),
            "its first chunk is \"IDAT\", not a 13-byte IHDR"},
        {"image/png", b64(java.util.Arrays.copyOf(png, 12)), "its header is cut short (12 bytes)"},
        {"image/png", b64(TestImages.declaring(png, 0, 20)), "its header declares 0\u00d720 pixels"},
        {"image/png", b64(TestImages.declaring(png, 8000, 5001)), "declares 8000\u00d75001 pixels; at most 40 megapixels"},
        {"image/jpeg", b64(concat(jfif, bytes(0xFF, 0xC0, 0x00, 0x11, 0x08, 0xEA, 0x60, 0xEA, 0x60, 0x03), new byte[9])),
            "declares 60000\u00d760000 pixels"},
        {"image/jpeg", b64(concat(jfif, bytes(0xFF, 0xC2, 0x00, 0x11, 0x08, 0x00, 0x00, 0x01, 0x00, 0x03), new byte[9])),
            "its header declares 256\u00d70 pixels"},
        {"image/jpeg", b64(concat(jfif, bytes(0xFF, 0xDA, 0x00, 0x08), new byte[6], bytes(0xFF, 0xD9))),
            "no frame header (SOF) comes before its image data"},
        {"image/jpeg", b64(concat(jfif, bytes(0x12, 0x34))), "byte 20 should begin a marker"},
        // A 1x1 screen with a frame that reaches 65535x65535: a decoder may grow its canvas for it.
        {"image/gif", b64(concat(ascii("GIF89a"), bytes(1, 0, 1, 0, 0, 0, 0), bytes(0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF,
            0xFF, 0, 2, 2, 0x4C, 0x01, 0, 0x3B))), "declares 65535\u00d765535 pixels"},
        {"image/gif", b64(concat(ascii("GIF89a"), bytes(1, 0, 1, 0, 0, 0, 0), bytes(0x99))), "byte 13 begins no GIF block"},
        {"image/gif", b64(ascii("GIF90a-------")), "says image/gif but its bytes do not start like one"},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEBPVP8X"), le32(10), new byte[4],
            bytes(0xFF, 0x3F, 0, 0xFF, 0x3F, 0))), "declares 16384\u00d716384 pixels"},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEBPVP8 "), le32(10), bytes(0x30, 1, 0, 0x9D, 1, 0x2A,
            0xFF, 0x3F, 0xFF, 0x3F))), "declares 16383\u00d716383 pixels"},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEBPVP8 "), le32(10), new byte[10])),
            "its VP8 frame lacks the start code 9d 01 2a"},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEBPVP8L"), le32(5), bytes(0x2F, 0xFF, 0xFF, 0xFF, 0x0F))),
            "declares 16384\u00d716384 pixels"},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEBPVP8L"), le32(5), bytes(0x2E, 0, 0, 0, 0))),
            "its VP8L data lacks the signature 0x2f"},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEBPJUNK"), new byte[10])),
            "its first chunk is \"JUNK\", not \"VP8 \", \"VP8L\" or \"VP8X\""},
        {"image/webp", b64(concat(ascii("RIFF"), le32(30), ascii("WEB\u0001"))),
            "its RIFF container holds \"WEB\\x01\", not \"WEBP\""},
    };
    for (String[] c : cases) {
      String message = refused(new JsonArray().add(new JsonObject().put("mimeType", c[0]).put("data", c[1])));
      assertTrue(message.startsWith("image 1 ") && message.contains(c[2]), c[2] + " in: " + message);
    }
  }

  private static String b64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }

  @Test
  void aPreviewIsBoundedTooAndALargeSmallImageIsNotItsOwnPreview() {
    byte[] png = TestImages.png(300, 200);
    String bombPreview = "data:image/png;base64," + b64(TestImages.declaring(png, 60_000, 60_000));
    String message = refused(new JsonArray().add(new JsonObject().put("mimeType", "image/png").put("data", b64(png))
        .put("preview", bombPreview)));
    assertTrue(message.contains("image 1's preview declares 60000\u00d760000 pixels; a preview may have at most 2048"),
        message);
    String fake = "data:image/webp;base64," + b64(concat(ascii("RIFF"), le32(200), ascii("AVI LIST"), new byte[8]));
    message = refused(new JsonArray().add(new JsonObject().put("mimeType", "image/png").put("data", b64(png))
        .put("preview", fake)));
    assertTrue(message.contains("image 1's preview says image/webp but its RIFF container holds \"AVI \""), message);
    // Few bytes but many pixels: the agent gets it, the transcript keeps no copy for every tab to decode.
    byte[] plain = TestImages.png(2100, 2100);
    assertTrue(plain.length <= PromptImages.MAX_PREVIEW_BYTES, "small in bytes: " + plain.length);
    JsonObject kept = PromptImages.check(one("image/png", plain)).forTranscript().getJsonObject(0);
    assertFalse(kept.containsKey("preview"), kept.encode());
    assertEquals(plain.length, kept.getInteger("bytes"));
  }
}
