package io.switchboard.push;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.interaso.webpush.VapidKeys;
import com.interaso.webpush.WebPush;
import io.switchboard.testkit.LoopbackPushService;
import io.switchboard.testkit.LoopbackPushService.Derivation;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The loopback push service's decryptor against RFC 8291's worked example (§5 and Appendix A,
 * values copied as printed, base64url, line breaks removed), then against the library: if both
 * agree with the RFC and with each other, a passing PushSenderTest means real browsers can read us.
 */
class Rfc8291Test {
  // RFC 8291 §5, "Push Message Encryption Example": the message body and the keys.
  static final String BODY = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
      + "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
      + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";
  static final String PLAINTEXT = "When I grow up, I want to be a watermelon";
  // RFC 8291 Appendix A, inputs.
  static final String PLAINTEXT_B64 = "V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24";
  static final String AS_PUBLIC = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIg"
      + "Dll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
  static final String AS_PRIVATE = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
  static final String UA_PUBLIC = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcx"
      + "aOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
  static final String UA_PRIVATE = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
  static final String SALT = "DGv6ra1nlYgDCS1FRnbzlw";
  static final String AUTH_SECRET = "BTBZMqHH6r4Tts7J_aSIgg";
  // RFC 8291 Appendix A, intermediate values.
  static final String ECDH_SECRET = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs";
  static final String PRK_KEY = "Snr3JMxaHVDXHWJn5wdC52WjpCtd2EIEGBykDcZW32k";
  static final String KEY_INFO = "V2ViUHVzaDogaW5mbwAEJXGyvs3942BVGq8e0PTNNmwR"
      + "zr5VX4m8t7GGpTM5FzFo7OLr4BhZe9MEebhuPI-OztV3"
      + "ylkYfpJGmQ22ggCLDgT-M_SrDepxkU21WCP3O1SUj0Ew"
      + "bZIHMtu5pZpTKGSCIA5Zent7wmC6HCJ5mFgJkuk5cwAv"
      + "MBKiiujwa7t45ewP";
  static final String IKM = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg";
  static final String PRK = "09_eUZGrsvxChDCGRCdkLiDXrReGOEVeSCdCcPBSJSc";
  static final String CEK_INFO = "Q29udGVudC1FbmNvZGluZzogYWVzMTI4Z2NtAA";
  static final String CEK = "oIhVW04MRdy2XN9CiKLxTg";
  static final String NONCE_INFO = "Q29udGVudC1FbmNvZGluZzogbm9uY2UA";
  static final String NONCE = "4h_95klXJ5E_qnoN";
  static final String HEADER = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z"
      + "9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml" + "mlMoZIIgDll6e3vCYLocInmYWAmS6Tlz"
      + "AC8wEqKK6PBru3jl7A8";
  static final String PADDED_PLAINTEXT = "V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0" + "byBiZSBhIHdhdGVybWVsb24C";
  static final String CIPHERTEXT = "8pfeW0KbunFT06SuDKoJH9Ql87S1QUrd" + "irN6GcG7sFz1y1sqLgVi1VhjVkHsUoEs"
      + "bI_0LpXMuGvnzQ";

  static byte[] b64(String s) {
    return Base64.getUrlDecoder().decode(s);
  }

  @Test
  void decryptsTheRfcExampleMessage() throws Exception {
    byte[] plaintext = LoopbackPushService.decrypt(b64(BODY), LoopbackPushService.privateKey(b64(UA_PRIVATE)),
        b64(UA_PUBLIC), b64(AUTH_SECRET));
    assertEquals(PLAINTEXT, new String(plaintext, StandardCharsets.UTF_8));
    assertArrayEquals(b64(PLAINTEXT_B64), plaintext);
  }

  @Test
  void theKeyScheduleGivesTheAppendixValues() throws Exception {
    Derivation d = LoopbackPushService.derive(LoopbackPushService.privateKey(b64(UA_PRIVATE)), b64(UA_PUBLIC),
        b64(AS_PUBLIC), b64(AUTH_SECRET), b64(SALT));
    assertArrayEquals(b64(ECDH_SECRET), d.ecdhSecret(), "ecdh_secret");
    assertArrayEquals(b64(PRK_KEY), d.prkKey(), "PRK_key");
    assertArrayEquals(b64(KEY_INFO), d.keyInfo(), "key_info");
    assertArrayEquals(b64(IKM), d.ikm(), "IKM");
    assertArrayEquals(b64(PRK), d.prk(), "PRK");
    assertArrayEquals(b64(CEK), d.cek(), "CEK");
    assertArrayEquals(b64(NONCE), d.nonce(), "NONCE");
    assertEquals("Content-Encoding: aes128gcm\0", new String(b64(CEK_INFO), StandardCharsets.US_ASCII));
    assertEquals("Content-Encoding: nonce\0", new String(b64(NONCE_INFO), StandardCharsets.US_ASCII));
  }

  /** The appendix's other half: the sender's private key gives the same secret, and the pieces make the body. */
  @Test
  void theSenderSideAgreesAndThePiecesMakeTheBody() throws Exception {
    KeyAgreement ecdh = KeyAgreement.getInstance("ECDH");
    ecdh.init(LoopbackPushService.privateKey(b64(AS_PRIVATE)));
    ecdh.doPhase(LoopbackPushService.publicKey(b64(UA_PUBLIC)), true);
    assertArrayEquals(b64(ECDH_SECRET), ecdh.generateSecret(), "ECDH(as_private, ua_public)");

    Cipher aes = Cipher.getInstance("AES/GCM/NoPadding");
    aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(b64(CEK), "AES"), new GCMParameterSpec(128, b64(NONCE)));
    assertArrayEquals(b64(CIPHERTEXT), aes.doFinal(b64(PADDED_PLAINTEXT)), "AES-GCM(CEK, NONCE, plaintext || 0x02)");

    ByteBuffer header = ByteBuffer.wrap(b64(HEADER));
    assertEquals(86, header.remaining());
    assertArrayEquals(b64(SALT), Arrays.copyOfRange(b64(HEADER), 0, 16), "salt");
    assertEquals(4096, header.getInt(16), "rs");
    assertEquals(65, header.get(20), "idlen");
    assertArrayEquals(b64(AS_PUBLIC), Arrays.copyOfRange(b64(HEADER), 21, 86), "keyid");
    assertArrayEquals(b64(BODY), concat(b64(HEADER), b64(CIPHERTEXT)), "header || ciphertext");
  }

  @Test
  void aTamperedBodyDoesNotDecrypt() throws Exception {
    byte[] body = b64(BODY);
    body[body.length - 20] ^= 1;
    ECPrivateKey ua = LoopbackPushService.privateKey(b64(UA_PRIVATE));
    assertThrows(GeneralSecurityException.class,
        () -> LoopbackPushService.decrypt(body, ua, b64(UA_PUBLIC), b64(AUTH_SECRET)));
  }

  /** The library encrypts, the JDK-only decryptor opens: the two sides were written apart. */
  @Test
  void theLibrarysBodyOpensWithTheLoopbackDecryptor() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair ua = generator.generateKeyPair();
    byte[] uaPublic = LoopbackPushService.uncompressed((ECPublicKey) ua.getPublic());
    byte[] auth = new byte[16];
    new SecureRandom().nextBytes(auth);
    VapidKeys vapid = VapidKeys.generate();
    WebPush webPush = new WebPush("mailto:ops@example.com", vapid);
    byte[] payload = "{\"title\":\"Permission asked\",\"body\":\"rm -rf build/ — ok?\"}".getBytes(StandardCharsets.UTF_8);

    byte[] body = webPush.getBody(payload, uaPublic, auth);
    assertArrayEquals(payload, LoopbackPushService.decrypt(body, (ECPrivateKey) ua.getPrivate(), uaPublic, auth));
    assertEquals(65, body[20], "keyid is an uncompressed P-256 key");
    assertFalse(Arrays.equals(vapid.getApplicationServerKey(), Arrays.copyOfRange(body, 21, 86)),
        "the message key is ephemeral, not the VAPID key");
    assertFalse(Arrays.equals(body, webPush.getBody(payload, uaPublic, auth)), "a fresh salt and key each time");
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
