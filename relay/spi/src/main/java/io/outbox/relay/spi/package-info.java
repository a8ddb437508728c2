/**
 * The service provider interface of outbox-relay: the only package that source and sink plug-ins
 * compile against.
 *
 * <p>A {@link io.outbox.relay.spi.Source} yields {@linkplain io.outbox.relay.spi.Claim claims} of
 * committed outbox events and makes the pipeline's {@linkplain io.outbox.relay.spi.Settlement
 * settlements} durable. A {@link io.outbox.relay.spi.Sink} publishes routed events to one broker
 * and answers one {@link io.outbox.relay.spi.Verdict} per event, only after the broker
 * acknowledged. Both are found with {@link java.util.ServiceLoader} through their providers ({@link
 * io.outbox.relay.spi.SourceProvider}, {@link io.outbox.relay.spi.SinkProvider}) by the {@code
 * type} name given in the configuration.
 */
package io.outbox.relay.spi;
