package io.switchboard.thread;

import java.nio.charset.StandardCharsets;

/**
 * The pixel size a PNG, JPEG, GIF or WebP declares in its own header, read by hand: nothing here
 * decodes a person's bytes (a few hundred bytes of header are read, whatever the image claims).
 * Bytes that are not of the kind they say they are fail with a message naming what is wrong.
 */
final class ImageHeaders {
  private static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

  /** Width and height in pixels, as the header says (for a GIF: the screen and every frame on it). */
  record Size(long width, long height) {
    long pixels() {
      return width * height;
    }

    @Override
    public String toString() {
      return width + "\u00d7" + height;
    }
  }

  private ImageHeaders() {
  }

  /**
   * The size {@code bytes} declare as {@code mime} (image/png, jpeg, gif or webp); the exception's
   * message completes "… says image/x but " (e.g. "its bytes do not start like one").
   */
  static Size read(String mime, byte[] bytes) {
    Size size = switch (mime) {
      case "image/png" -> png(bytes);
      case "image/jpeg" -> jpeg(bytes);
      case "image/gif" -> gif(bytes);
      case "image/webp" -> webp(bytes);
      default -> throw new IllegalArgumentException("it is not a kind whose header is read here");
    };
    if (size.width() < 1 || size.height() < 1) {
      throw new IllegalArgumentException("its header declares " + size + " pixels");
    }
    return size;
  }

  /** The signature, then IHDR, which the PNG format puts first: width and height, 4 bytes each. */
  private static Size png(byte[] b) {
    if (!startsWith(b, PNG)) {
      throw notLikeOne();
    }
    need(b, 24);
    if (u32be(b, 8) != 13 || !fourcc(b, 12).equals("IHDR")) {
      throw new IllegalArgumentException("its first chunk is " + quoted(b, 12) + ", not a 13-byte IHDR");
    }
    long width = u32be(b, 16);
    long height = u32be(b, 20);
    if (width > Integer.MAX_VALUE || height > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("its IHDR declares " + width + "\u00d7" + height
          + " pixels, past PNG's 2^31-1 a side");
    }
    return new Size(width, height);
  }

  /** The segments after SOI up to the first frame header (SOFn): its height and width. */
  private static Size jpeg(byte[] b) {
    if (b.length < 3 || (b[0] & 0xFF) != 0xFF || (b[1] & 0xFF) != 0xD8 || (b[2] & 0xFF) != 0xFF) {
      throw notLikeOne();
    }
    int i = 2;
    while (true) {
      need(b, i + 2);
      if ((b[i] & 0xFF) != 0xFF) {
        throw new IllegalArgumentException("byte " + i + " should begin a marker (0xFF) before any frame header");
      }
      while (i < b.length && (b[i] & 0xFF) == 0xFF) {
        i++; // fill bytes may pad a marker
      }
      need(b, i + 1);
      int marker = b[i++] & 0xFF;
      if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
        continue; // markers without a length
      }
      if (marker == 0xD9 || marker == 0xDA) {
        throw new IllegalArgumentException("no frame header (SOF) comes before its image data");
      }
      need(b, i + 2);
      int length = u16be(b, i);
      if (length < 2) {
        throw new IllegalArgumentException("the segment at byte " + (i - 2) + " has a length of " + length);
      }
      if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
        need(b, i + 7);
        return new Size(u16be(b, i + 5), u16be(b, i + 3)); // precision, then height, then width
      }
      i += length;
    }
  }

  /**
   * The logical screen, and every frame's extent on it: a frame may claim to reach past the screen,
   * and a decoder may grow its canvas to hold it. The walk stops at the trailer or the data's end.
   */
  private static Size gif(byte[] b) {
    if (!startsWith(b, "GIF87a".getBytes(StandardCharsets.US_ASCII))
        && !startsWith(b, "GIF89a".getBytes(StandardCharsets.US_ASCII))) {
      throw notLikeOne();
    }
    need(b, 13);
    long width = u16le(b, 6);
    long height = u16le(b, 8);
    int i = 13 + colorTable(b[10]);
    while (i < b.length) {
      int block = b[i++] & 0xFF;
      if (block == 0x3B) {
        break; // the trailer
      } else if (block == 0x21) {
        i = subBlocks(b, i + 1); // an extension: its label, then its data
      } else if (block == 0x2C) {
        need(b, i + 9);
        width = Math.max(width, u16le(b, i) + u16le(b, i + 4));
        height = Math.max(height, u16le(b, i + 2) + u16le(b, i + 6));
        i = subBlocks(b, i + 9 + colorTable(b[i + 8]) + 1); // after the LZW code size
      } else {
        throw new IllegalArgumentException("byte " + (i - 1) + " begins no GIF block (0x"
            + Integer.toHexString(block) + ")");
      }
    }
    return new Size(width, height);
  }

  /** The bytes of a colour table a GIF's flags announce (0 when none). */
  private static int colorTable(byte flags) {
    return (flags & 0x80) == 0 ? 0 : 3 * (1 << ((flags & 7) + 1));
  }

  /** Past a run of GIF sub-blocks (each its length, then that many bytes; a 0 length ends them). */
  private static int subBlocks(byte[] b, int i) {
    while (i < b.length) {
      int length = b[i] & 0xFF;
      i += 1 + length;
      if (length == 0) {
        break;
      }
    }
    return i;
  }

  /** RIFF, its form "WEBP", then the first chunk: a lossy VP8, a lossless VP8L, or an extended VP8X canvas. */
  private static Size webp(byte[] b) {
    if (!startsWith(b, "RIFF".getBytes(StandardCharsets.US_ASCII))) {
      throw notLikeOne();
    }
    need(b, 12);
    if (!fourcc(b, 8).equals("WEBP")) {
      throw new IllegalArgumentException("its RIFF container holds " + quoted(b, 8) + ", not \"WEBP\"");
    }
    need(b, 20);
    String chunk = fourcc(b, 12);
    switch (chunk) {
      case "VP8 " -> {
        need(b, 30);
        if ((b[23] & 0xFF) != 0x9D || (b[24] & 0xFF) != 0x01 || (b[25] & 0xFF) != 0x2A) {
          throw new IllegalArgumentException("its VP8 frame lacks the start code 9d 01 2a");
        }
        return new Size(u16le(b, 26) & 0x3FFF, u16le(b, 28) & 0x3FFF);
      }
      case "VP8L" -> {
        need(b, 25);
        if ((b[20] & 0xFF) != 0x2F) {
          throw new IllegalArgumentException("its VP8L data lacks the signature 0x2f");
        }
        long bits = u32le(b, 21);
        return new Size((bits & 0x3FFF) + 1, ((bits >>> 14) & 0x3FFF) + 1);
      }
      case "VP8X" -> {
        need(b, 30);
        return new Size(u24le(b, 24) + 1, u24le(b, 27) + 1);
      }
      default -> throw new IllegalArgumentException("its first chunk is " + quoted(b, 12)
          + ", not \"VP8 \", \"VP8L\" or \"VP8X\"");
    }
  }

  private static IllegalArgumentException notLikeOne() {
    return new IllegalArgumentException("its bytes do not start like one");
  }

  private static void need(byte[] b, int length) {
    if (b.length < length) {
      throw new IllegalArgumentException("its header is cut short (" + b.length + " bytes)");
    }
  }

  private static boolean startsWith(byte[] b, byte[] prefix) {
    if (b.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (b[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  private static String fourcc(byte[] b, int at) {
    return new String(b, at, 4, StandardCharsets.ISO_8859_1);
  }

  /** Four bytes as a quoted name, anything not printable ASCII written \xNN: it goes into an error the page shows. */
  private static String quoted(byte[] b, int at) {
    StringBuilder out = new StringBuilder("\"");
    for (int i = at; i < at + 4; i++) {
      int c = b[i] & 0xFF;
      out.append(c >= 0x20 && c < 0x7F && c != '"' && c != '\\' ? String.valueOf((char) c)
          : String.format("\\x%02x", c));
    }
    return out.append('"').toString();
  }

  private static int u16be(byte[] b, int at) {
    return (b[at] & 0xFF) << 8 | (b[at + 1] & 0xFF);
  }

  private static long u32be(byte[] b, int at) {
    return (long) u16be(b, at) << 16 | u16be(b, at + 2);
  }

  private static int u16le(byte[] b, int at) {
    return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8;
  }

  private static long u24le(byte[] b, int at) {
    return u16le(b, at) | (long) (b[at + 2] & 0xFF) << 16;
  }

  private static long u32le(byte[] b, int at) {
    return u16le(b, at) | (long) u16le(b, at + 2) << 16;
  }
}
