package io.switchboard.common;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.concurrent.Callable;

/**
 * Blocking work of one owner (an agent session's {@code fs/*} calls, a repository's git changes) on
 * Vert.x's worker pool, at most {@code parallel} at a time and in order of arrival. Each session has its own lane: a call that
 * blocks (a named pipe, a slow disk) holds up its own agent only, never another thread's agent
 * start or file calls, as one ordered queue per room would. Used on the agent room's event loop.
 */
public final class BlockingLane {
  private final Vertx vertx;
  private final int parallel;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private int running;

  public BlockingLane(Vertx vertx, int parallel) {
    this.vertx = vertx;
    this.parallel = parallel;
  }

  public <T> Future<T> run(Callable<T> work) {
    Promise<T> done = Promise.promise();
    Runnable start = () -> {
      running++;
      vertx.<T>executeBlocking(work, false).onComplete(result -> {
        running--;
        Runnable next = waiting.poll();
        if (next != null) {
          next.run();
        }
        done.handle(result);
      });
    };
    if (running < parallel) {
      start.run();
    } else {
      waiting.add(start);
    }
    return done.future();
  }

  /** Calls waiting for a free place in the lane (not yet running). */
  public int waiting() {
    return waiting.size();
  }
}
