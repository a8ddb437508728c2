package io.outbox.sink.kafka;

/**
 * Kafka's topic name rules, checked before a send so that a bad destination fails at once as a
 * permanent verdict instead of costing a metadata round trip.
 */
final class TopicNames {

  /** Kafka's limit on the length of a topic name. */
  static final int MAX_LENGTH = 249;

  private TopicNames() {}

  /** Why {@code topic} is not a legal Kafka topic name, or {@code null} when it is. */
  static String problem(String topic) {
    if (topic.isEmpty()) {
      return "invalid topic name '': it is empty";
    }
    if (topic.equals(".") || topic.equals("..")) {
      return "invalid topic name '" + topic + "': '.' and '..' are not allowed";
    }
    if (topic.length() > MAX_LENGTH) {
      return "invalid topic name '"
          + topic.substring(0, 40)
          + "...': "
          + topic.length()
          + " characters, at most "
          + MAX_LENGTH
          + " allowed";
    }
    for (int i = 0; i < topic.length(); i++) {
      char c = topic.charAt(i);
      if (!legal(c)) {
        return "invalid topic name '"
            + printable(topic)
            + "': character "
            + describe(c)
            + " at position "
            + i
            + " is not allowed (only a-z, A-Z, 0-9, '.', '_' and '-')";
      }
    }
    return null;
  }

  private static boolean legal(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '.'
        || c == '_'
        || c == '-';
  }

  private static String describe(char c) {
    return Character.isISOControl(c) || Character.isWhitespace(c)
        ? String.format("U+%04X", (int) c)
        : "'" + c + "'";
  }

  private static String printable(String topic) {
    StringBuilder sb = new StringBuilder(topic.length());
    topic.codePoints().forEach(cp -> sb.appendCodePoint(Character.isISOControl(cp) ? '?' : cp));
    return sb.toString();
  }
}
