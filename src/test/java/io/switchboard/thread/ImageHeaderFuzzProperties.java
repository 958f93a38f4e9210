package io.switchboard.thread;

import io.switchboard.testkit.TestImages;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Real images of every kind, cut short, with bytes changed, or spliced into another kind's header:
 * the header reader gives a size of at least 1x1 or an error naming what is wrong, never anything
 * else (an index out of bounds would reach the person as an internal error).
 */
class ImageHeaderFuzzProperties {
  private static final List<String> KINDS = List.of("image/png", "image/jpeg", "image/gif", "image/webp");
  private static final List<byte[]> SEEDS = List.of(TestImages.png(40, 30), TestImages.encoded("jpeg", 40, 30),
      TestImages.encoded("gif", 40, 30),
      Base64.getDecoder().decode("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA"),
      Base64.getDecoder().decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="),
      Base64.getDecoder().decode("UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0B"
          + "KgEAAQAAAP4AAA3AAP7mtQAAAA=="));

  @Provide
  Arbitrary<byte[]> mangled() {
    Arbitrary<byte[]> seed = Arbitraries.of(SEEDS);
    return Combinators.combine(seed, Arbitraries.integers().between(0, 400),
        Arbitraries.integers().between(0, 399).list().ofMaxSize(8), Arbitraries.bytes().list().ofMaxSize(8))
        .as((bytes, cut, at, values) -> {
          byte[] out = Arrays.copyOf(bytes, Math.min(bytes.length, cut));
          for (int i = 0; i < Math.min(at.size(), values.size()); i++) {
            if (out.length > 0) {
              out[at.get(i) % out.length] = values.get(i);
            }
          }
          return out;
        });
  }

  @Property(tries = 2000)
  void aHeaderGivesASizeOrANamedRefusal(@ForAll("mangled") byte[] bytes, @ForAll("kinds") String kind) {
    try {
      ImageHeaders.Size size = ImageHeaders.read(kind, bytes);
      if (size.width() < 1 || size.height() < 1) {
        throw new AssertionError("a size of no pixels: " + size);
      }
    } catch (IllegalArgumentException refused) {
      if (refused.getMessage() == null || refused.getMessage().isBlank()) {
        throw new AssertionError("a refusal that names nothing", refused);
      }
    }
    try {
      PromptImages.check(new JsonArray().add(new JsonObject().put("mimeType", kind)
          .put("data", Base64.getEncoder().encodeToString(bytes))));
    } catch (IllegalArgumentException refused) {
      if (!refused.getMessage().startsWith("image 1 ")) {
        throw new AssertionError("a refusal that does not name the image: " + refused.getMessage());
      }
    }
  }

  @Provide
  Arbitrary<String> kinds() {
    return Arbitraries.of(KINDS);
  }
}
