package org.mxc;

import java.util.function.Consumer;

/**
 * Told about a {@link Fit}'s progress, on the thread running {@link
 * Fit#run}: read values ({@link Fit#value}, {@link Fit#valAccuracy()},
 * ...) or {@link Fit#stop()} the run. A listener that throws ends the
 * run: {@code run} then throws MxcException with the listener's exception
 * as its cause.
 *
 * <pre>{@code
 * fit.addListener(TrainingListener.onEpochEnd(f -> System.out.println(f.valAccuracy())));
 * fit.addListener((event, f) -> { if (f.trainLoss() < 0.1) f.stop(); });
 * }</pre>
 */
@FunctionalInterface
public interface TrainingListener {
  /** When a listener is called. */
  enum Event {
    /** After each training batch. */
    BATCH_END,
    /** After each epoch (evaluation, checkpoint and log done). */
    EPOCH_END,
    /** When the run ends without error. */
    TRAIN_END
  }

  /** Called after each event. */
  void on(Event event, Fit fit);

  /** A listener of epoch ends only. */
  static TrainingListener onEpochEnd(Consumer<Fit> action) {
    return (event, fit) -> {
      if (event == Event.EPOCH_END) action.accept(fit);
    };
  }

  /** A listener of batch ends only. */
  static TrainingListener onBatchEnd(Consumer<Fit> action) {
    return (event, fit) -> {
      if (event == Event.BATCH_END) action.accept(fit);
    };
  }
}
