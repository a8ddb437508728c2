package io.outbox.relay.config;

import io.outbox.relay.spi.SinkProvider;
import io.outbox.relay.spi.SourceProvider;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;

/**
 * The source and sink plug-ins on the class path, by their {@code type} name, found with {@link
 * ServiceLoader}. When two providers claim the same type, the first found wins.
 */
public final class Plugins {

  private final Map<String, SourceProvider> sources;
  private final Map<String, SinkProvider> sinks;
  private final SecretMasker secrets;

  private Plugins(Map<String, SourceProvider> sources, Map<String, SinkProvider> sinks) {
    this.sources = Collections.unmodifiableMap(sources);
    this.sinks = Collections.unmodifiableMap(sinks);
    this.secrets = SecretMasker.of(this);
  }

  /** Which settings are secrets, as these plug-ins and the relay declare them. */
  public SecretMasker secrets() {
    return secrets;
  }

  /** The providers registered in {@code META-INF/services} visible to {@code classLoader}. */
  public static Plugins load(ClassLoader classLoader) {
    return of(
        ServiceLoader.load(SourceProvider.class, classLoader).stream()
            .map(ServiceLoader.Provider::get)
            .toList(),
        ServiceLoader.load(SinkProvider.class, classLoader).stream()
            .map(ServiceLoader.Provider::get)
            .toList());
  }

  /** Exactly these providers. */
  public static Plugins of(List<SourceProvider> sources, List<SinkProvider> sinks) {
    Map<String, SourceProvider> sourceMap = new TreeMap<>();
    sources.forEach(p -> sourceMap.putIfAbsent(p.type(), p));
    Map<String, SinkProvider> sinkMap = new TreeMap<>();
    sinks.forEach(p -> sinkMap.putIfAbsent(p.type(), p));
    return new Plugins(sourceMap, sinkMap);
  }

  /** The source plug-in for {@code source.type}. */
  public Optional<SourceProvider> source(String type) {
    return Optional.ofNullable(sources.get(type));
  }

  /** The sink plug-in for {@code sink.type}. */
  public Optional<SinkProvider> sink(String type) {
    return Optional.ofNullable(sinks.get(type));
  }

  /** Every known {@code source.type}, sorted. */
  public Set<String> sourceTypes() {
    return sources.keySet();
  }

  /** Every known {@code sink.type}, sorted. */
  public Set<String> sinkTypes() {
    return sinks.keySet();
  }
}
