package io.outbox.connect;

/** The connector's version: the jar's Implementation-Version, or "unknown" outside a jar. */
final class Version {

  static final String VERSION =
      Version.class.getPackage().getImplementationVersion() != null
          ? Version.class.getPackage().getImplementationVersion()
          : "unknown";

  private Version() {}
}
