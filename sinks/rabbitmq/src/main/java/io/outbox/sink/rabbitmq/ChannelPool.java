package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.Deadline;
import java.io.IOException;
import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeoutException;
import org.apache.commons.pool2.BasePooledObjectFactory;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import org.apache.commons.pool2.impl.GenericObjectPool;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

/**
 * At most {@code channels} confirm-mode channels on the sink's connection, each lent to one sender
 * at a time (a commons-pool2 {@link GenericObjectPool}). Channels are opened lazily and lent in the
 * order they were given back; a closed one is dropped when it comes back or is next taken, and a
 * new one opened in its place (on a new connection if the old one is gone).
 */
final class ChannelPool {

  /** Opens a channel (and the connection under it if there is none). */
  @FunctionalInterface
  interface Opener {
    PublishChannel open() throws IOException, TimeoutException;
  }

  private final GenericObjectPool<PublishChannel> pool;

  ChannelPool(int channels, Opener opener) {
    GenericObjectPoolConfig<PublishChannel> config = new GenericObjectPoolConfig<>();
    config.setMaxTotal(channels);
    config.setMaxIdle(channels);
    config.setLifo(false);
    config.setBlockWhenExhausted(true);
    config.setTestOnReturn(true); // a channel that closed while lent is dropped
    config.setJmxEnabled(false);
    this.pool = new GenericObjectPool<>(new Channels(opener), config);
  }

  /**
   * A usable channel, or {@code null} when none became free before {@code deadline}.
   *
   * @throws IllegalStateException once closed
   */
  PublishChannel borrow(Deadline deadline)
      throws IOException, TimeoutException, InterruptedException {
    try {
      return pool.borrowObject(Duration.ofNanos(deadline.nanosLeft()));
    } catch (NoSuchElementException e) {
      if (e.getCause() instanceof IOException closed) {
        throw closed; // a new channel closed before it was lent (Channels#activateObject)
      }
      return null; // none came free in time
    } catch (IOException | TimeoutException | InterruptedException | RuntimeException e) {
      throw e;
    } catch (Exception e) { // the opener throws only the above
      throw new IllegalStateException(e);
    }
  }

  /** Takes back a channel from {@link #borrow}. */
  void giveBack(PublishChannel pc) {
    pool.returnObject(pc);
  }

  /** Closes the idle channels; channels still lent are closed when they come back. */
  void close() {
    pool.close();
  }

  /** How the pool opens, checks and closes channels. */
  private static final class Channels extends BasePooledObjectFactory<PublishChannel> {
    private final Opener opener;

    Channels(Opener opener) {
      this.opener = opener;
    }

    @Override
    public PublishChannel create() throws IOException, TimeoutException {
      return opener.open();
    }

    @Override
    public PooledObject<PublishChannel> wrap(PublishChannel pc) {
      return new DefaultPooledObject<>(pc);
    }

    /** Drops a channel that closed while idle (the pool then takes the next or opens one). */
    @Override
    public void activateObject(PooledObject<PublishChannel> p) throws IOException {
      if (!p.getObject().isUsable()) {
        throw new IOException("channel closed: " + p.getObject().closeReason());
      }
    }

    @Override
    public boolean validateObject(PooledObject<PublishChannel> p) {
      return p.getObject().isUsable();
    }

    @Override
    public void destroyObject(PooledObject<PublishChannel> p) {
      p.getObject().close();
    }
  }
}
