package io.outbox.relay.spi;

import java.nio.charset.StandardCharsets;

/**
 * The lane of a key, the one definition for every source: PostgreSQL's {@code hashtext()} of the
 * key's {@code aggregate_type}, the unit separator (U+001F) and its {@code aggregate_id}, its sign
 * bit cleared, modulo the lane count. The polling source computes it in its claim's SQL ({@link
 * #sql}); the CDC source in Java ({@link #lane}), the same function: a key has the same lane
 * whichever source reads it (issue #29).
 *
 * <p>{@code hashtext()} is Bob Jenkins' lookup3 hash of the text's bytes, as PostgreSQL computes it
 * on a little-endian server (x86-64, AArch64) for a database in UTF-8 and a deterministic
 * collation; {@code LaneFunctionIT} compares both forms on the same keys.
 */
public final class LaneFunction {

  private static final char SEPARATOR = '\u001f';

  private LaneFunction() {}

  /** The lane of the key {@code (aggregateType, aggregateId)} among {@code lanes}. */
  public static int lane(String aggregateType, String aggregateId, int lanes) {
    if (lanes < 1) {
      throw new IllegalArgumentException("lanes must be at least 1, got " + lanes);
    }
    byte[] key = (aggregateType + SEPARATOR + aggregateId).getBytes(StandardCharsets.UTF_8);
    return (hashText(key) & 0x7fffffff) % lanes;
  }

  /**
   * The same, as a SQL expression over the columns {@code typeColumn} and {@code idColumn} (a NULL
   * counts as the empty string, so that a row of a hand-made table without a key still has a lane).
   */
  public static String sql(String typeColumn, String idColumn, int lanes) {
    return sql(typeColumn, idColumn, Integer.toString(lanes));
  }

  /** The same, with the lane count an SQL expression (a scalar subquery, for example). */
  public static String sql(String typeColumn, String idColumn, String lanes) {
    return "((hashtext(coalesce("
        + typeColumn
        + "::text, '') || chr(31) || coalesce("
        + idColumn
        + "::text, '')) & 2147483647) % "
        + lanes
        + ")";
  }

  /** PostgreSQL's {@code hash_bytes} (lookup3) of {@code k}, little-endian word order. */
  static int hashText(byte[] k) {
    int length = k.length;
    int a = 0x9e3779b9 + length + 3923095;
    int b = a;
    int c = a;
    int i = 0;
    int left = length;
    while (left >= 12) {
      a += word(k, i);
      b += word(k, i + 4);
      c += word(k, i + 8);
      // mix(a, b, c)
      a -= c;
      a ^= Integer.rotateLeft(c, 4);
      c += b;
      b -= a;
      b ^= Integer.rotateLeft(a, 6);
      a += c;
      c -= b;
      c ^= Integer.rotateLeft(b, 8);
      b += a;
      a -= c;
      a ^= Integer.rotateLeft(c, 16);
      c += b;
      b -= a;
      b ^= Integer.rotateLeft(a, 19);
      a += c;
      c -= b;
      c ^= Integer.rotateLeft(b, 4);
      b += a;
      i += 12;
      left -= 12;
    }
    // The last 0-11 bytes: a takes bytes 0-3, b 4-7, c 8-10 from its second byte up (its lowest
    // byte stands for the length, already added).
    for (int j = left - 1; j >= 0; j--) {
      int v = k[i + j] & 0xff;
      if (j < 4) {
        a += v << (8 * j);
      } else if (j < 8) {
        b += v << (8 * (j - 4));
      } else {
        c += v << (8 * (j - 7));
      }
    }
    // final(a, b, c)
    c ^= b;
    c -= Integer.rotateLeft(b, 14);
    a ^= c;
    a -= Integer.rotateLeft(c, 11);
    b ^= a;
    b -= Integer.rotateLeft(a, 25);
    c ^= b;
    c -= Integer.rotateLeft(b, 16);
    a ^= c;
    a -= Integer.rotateLeft(c, 4);
    b ^= a;
    b -= Integer.rotateLeft(a, 14);
    c ^= b;
    c -= Integer.rotateLeft(b, 24);
    return c;
  }

  private static int word(byte[] k, int i) {
    return (k[i] & 0xff)
        | (k[i + 1] & 0xff) << 8
        | (k[i + 2] & 0xff) << 16
        | (k[i + 3] & 0xff) << 24;
  }
}
