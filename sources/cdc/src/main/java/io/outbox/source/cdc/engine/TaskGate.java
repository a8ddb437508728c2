package io.outbox.source.cdc.engine;

import io.outbox.relay.spi.Deadline;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.source.SourceTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gate every call of one session's connector task passes ({@link EngineTask}): it counts the
 * calls in flight, and once the session stops the engine it lets no call into the connector again
 * and stops every task the engine started, after the last call in flight has left. So "is the
 * engine's connector still running" is answered by this object, not by the threads Debezium made: a
 * task restarting its connector after a retriable error does so inside a {@code poll} counted here,
 * and a {@code start} still running when the engine gave up is stopped as soon as it returns.
 */
final class TaskGate {

  private static final Logger log = LoggerFactory.getLogger(TaskGate.class);

  /** The engine property naming the session's gate; passed on to the task's configuration. */
  static final String REGISTRATION = "outbox-relay.engine.task-gate";

  private static final Map<String, TaskGate> GATES = new ConcurrentHashMap<>();

  private final String pipeline;
  private final String id = UUID.randomUUID().toString();
  private final List<SourceTask> tasks = new ArrayList<>(); // guarded by this
  private final Set<Thread> callers = new HashSet<>(); // guarded by this
  private boolean closed; // guarded by this
  private boolean unstopped; // guarded by this: a call entered since the tasks were last stopped
  private boolean stoppingNow; // guarded by this

  TaskGate(String pipeline) {
    this.pipeline = pipeline;
  }

  /**
   * Makes the gate findable by its tasks, until it closes.
   *
   * @return the value of {@link #REGISTRATION} for this gate
   */
  synchronized String open() {
    if (!closed) {
      GATES.put(id, this);
    }
    return id;
  }

  /** The gate named by a task's configuration, or {@code null}. */
  static TaskGate named(String id) {
    return id == null ? null : GATES.get(id);
  }

  /**
   * Lets a call of {@code task} into the connector.
   *
   * @return false once the gate is closed: the call must not reach the connector
   */
  synchronized boolean enter(SourceTask task) {
    if (closed) {
      return false;
    }
    if (!tasks.contains(task)) {
      tasks.add(task);
    }
    callers.add(Thread.currentThread());
    unstopped = true;
    return true;
  }

  /**
   * Ends a call let in by {@link #enter}; the last one out after {@link #close} stops the tasks.
   */
  void exit() {
    synchronized (this) {
      callers.remove(Thread.currentThread());
    }
    stopIfLast();
  }

  /**
   * Closes the gate for good and stops the tasks, at once when no call is in flight, else as the
   * last call in flight leaves: Debezium's task stops under the lock its start and its restart
   * hold, so stopping it meanwhile would block the caller for as long. Safe to call more than once.
   */
  void close() {
    synchronized (this) {
      closed = true;
      GATES.remove(id);
    }
    stopIfLast();
  }

  /** Stops every task if the gate is closed, no call is in flight and one entered since. */
  private void stopIfLast() {
    List<SourceTask> stopping;
    synchronized (this) {
      if (!closed || !callers.isEmpty() || !unstopped) {
        return;
      }
      unstopped = false;
      stoppingNow = true;
      stopping = List.copyOf(tasks);
    }
    // A poll cancelled by the engine leaves interrupted: the task would then skip closing its
    // replication connection ("interrupted while stopping").
    boolean interrupted = Thread.interrupted();
    try {
      for (SourceTask t : stopping) {
        try {
          t.stop();
        } catch (RuntimeException e) {
          log.warn("pipeline {}: stopping the connector task: {}", pipeline, e.getMessage());
        }
      }
    } finally {
      synchronized (this) {
        stoppingNow = false;
        notifyAll();
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether the gate is closed, no call is in flight and every task was stopped after its last. */
  synchronized boolean quiet() {
    return closed && callers.isEmpty() && !unstopped && !stoppingNow;
  }

  /** Waits until {@link #quiet} or the deadline. */
  synchronized boolean awaitQuiet(Deadline deadline) throws InterruptedException {
    while (!quiet()) {
      long left = deadline.nanosLeft();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** Interrupts the threads of the calls in flight (a connector stuck starting or reconnecting). */
  synchronized void interruptCalls() {
    callers.forEach(Thread::interrupt);
  }

  /** What of the connector still runs, for messages; empty when {@link #quiet}. */
  synchronized List<String> running() {
    List<String> what = new ArrayList<>();
    if (!callers.isEmpty()) {
      what.add(callers.size() + " call(s) of the connector task in flight");
    } else if (!closed && !tasks.isEmpty()) {
      what.add("the connector task, not stopped");
    } else if (stoppingNow) {
      what.add("the connector task, stopping");
    } else if (unstopped) {
      what.add("the connector task, not stopped since its last call");
    }
    return what;
  }
}
