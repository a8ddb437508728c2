package io.outbox.bench;

import java.util.ArrayList;
import java.util.List;

/** Runs one task per index on named threads and waits for all; the first failure is rethrown. */
final class Parallel {
  private Parallel() {}

  /** One task of {@link #run}: thread {@code index} of them. */
  interface Task {
    void run(int index) throws Exception;
  }

  static void run(String name, int threads, Task task) throws Exception {
    List<Thread> started = new ArrayList<>();
    List<Exception> failures = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      int index = i;
      Thread t =
          new Thread(
              () -> {
                try {
                  task.run(index);
                } catch (Exception e) {
                  synchronized (failures) {
                    failures.add(e);
                  }
                }
              },
              name + "-" + i);
      t.start();
      started.add(t);
    }
    for (Thread t : started) {
      t.join();
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException(name + " failed: " + failures.get(0), failures.get(0));
    }
  }
}
