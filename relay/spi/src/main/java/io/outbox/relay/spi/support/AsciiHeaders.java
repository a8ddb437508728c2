package io.outbox.relay.spi.support;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Header names and values for a broker whose headers are US-ASCII text (NATS, HTTP-style
 * protocols). A name must be printable US-ASCII without {@code ':'} or blanks ({@link
 * #nameProblem}); a value with any other character (or leading or trailing blanks, or the look of
 * an encoded word) is sent as an RFC 2047 encoded word, {@code =?UTF-8?B?<base64 of its UTF-8
 * bytes>?=} ({@link #encode}), which {@link #decode} turns back.
 */
public final class AsciiHeaders {

  private static final String ENCODED_PREFIX = "=?UTF-8?B?";
  private static final String ENCODED_SUFFIX = "?=";

  private AsciiHeaders() {}

  /**
   * Why a header named {@code name} cannot be sent, or {@code null} when it can.
   *
   * @param broker the broker's name in the message, e.g. {@code NATS}
   */
  public static String nameProblem(String name, String broker) {
    if (name.isEmpty()) {
      return "a header with an empty name cannot be sent to " + broker;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 33 || c > 126 || c == ':') {
        return "header name '"
            + name
            + "' cannot be sent to "
            + broker
            + " (printable US-ASCII without ':' or blanks only)";
      }
    }
    return null;
  }

  /** {@code value} as it is when it is plain US-ASCII, else as an RFC 2047 encoded word. */
  public static String encode(String value) {
    if (value == null || value.isEmpty() || plain(value)) {
      return value;
    }
    return ENCODED_PREFIX
        + Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))
        + ENCODED_SUFFIX;
  }

  /** The inverse of {@link #encode}: what a consumer does with a header value. */
  public static String decode(String value) {
    if (value != null && encodedWord(value)) {
      String base64 =
          value.substring(ENCODED_PREFIX.length(), value.length() - ENCODED_SUFFIX.length());
      try {
        return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return value;
      }
    }
    return value;
  }

  private static boolean encodedWord(String value) {
    return value.startsWith(ENCODED_PREFIX) && value.endsWith(ENCODED_SUFFIX);
  }

  private static boolean plain(String value) {
    if (value.charAt(0) == ' ' || value.charAt(value.length() - 1) == ' ') {
      return false; // may be trimmed on the way
    }
    if (encodedWord(value)) {
      return false; // would be taken for an encoded word
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 32 || c > 126) {
        return false;
      }
    }
    return true;
  }
}
