package io.switchboard.testkit;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import javax.imageio.ImageIO;

/** Real images for the tests that attach them. */
public final class TestImages {
  private TestImages() {
  }

  /** A PNG of {@code w}x{@code h} pixels, orange with a blue square. */
  public static byte[] png(int w, int h) {
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setColor(Color.ORANGE);
    g.fillRect(0, 0, w, h);
    g.setColor(Color.BLUE);
    g.fillRect(w / 4, h / 4, w / 2, h / 2);
    g.dispose();
    return encode(image);
  }

  /** A PNG of random pixels: it does not compress, so it is large for its size. */
  public static byte[] noisePng(int w, int h, long seed) {
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    java.util.Random random = new java.util.Random(seed);
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < w; x++) {
        image.setRGB(x, y, random.nextInt(0x1000000));
      }
    }
    return encode(image);
  }

  private static byte[] encode(BufferedImage image) {
    return encode(image, "png");
  }

  private static byte[] encode(BufferedImage image, String format) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      if (!ImageIO.write(image, format, out)) {
        throw new IllegalStateException("the JDK writes no " + format);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** A JPEG or GIF ({@code format}: "jpeg", "gif") of {@code w}x{@code h} pixels, as the JDK writes one. */
  public static byte[] encoded(String format, int w, int h) {
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setColor(Color.ORANGE);
    g.fillRect(0, 0, w, h);
    g.dispose();
    return encode(image, format);
  }

  /** {@code png} with its IHDR rewritten to declare {@code w}x{@code h} pixels (and a CRC that fits): a bomb's header. */
  public static byte[] declaring(byte[] png, long w, long h) {
    byte[] out = png.clone();
    java.nio.ByteBuffer.wrap(out).putInt(16, (int) w).putInt(20, (int) h);
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(out, 12, 17); // the chunk's type and data
    java.nio.ByteBuffer.wrap(out).putInt(29, (int) crc.getValue());
    return out;
  }

  public static String pngBase64(int w, int h) {
    return Base64.getEncoder().encodeToString(png(w, h));
  }
}
