/* bench/train's ResNet-18 training step: batch 32 (by default) of 224 x
 * 224 images, SGD with momentum 0.9, through mxc (the graph and weights of
 * scripts/make_resnet.py, simple_bind, forward/backward, sgd_mom_update)
 * and PyTorch (bench/train_torch.py --model resnet18: the same weights
 * and the same batch) in one invocation. */
#ifndef MXC_BENCH_TRAIN_RESNET_H_
#define MXC_BENCH_TRAIN_RESNET_H_

/* Most rounds of --resnet-rounds. */
#define RESNET_MAX_ROUNDS 20

typedef struct resnet_opts {
  int batch, image, steps, warmup, torch, rounds;
  int threads; /* PyTorch's threads (train's --threads); 0: 2 */
  double lr, tolerance;
  const char *argv0, *python, *torch_script;
} resnet_opts;

/* Fills o with the defaults (batch 32, image 224, 5 timed steps after 1
 * warm-up step, 3 rounds, lr 0.01, loss tolerance 0.02 relative). */
void resnet_opts_init(resnet_opts *o, const char *argv0);

/* Runs both sides o->rounds times, alternating which goes first (the
 * machine's speed drifts: PyTorch's own step time has been seen to move by
 * 45% within one session here, so one mxc run against one later PyTorch
 * run measures the drift as much as the code), and prints name=value lines:
 *   resnet18_train_roundK_ms, resnet18_train_roundK_torch_ms,
 *     resnet18_train_roundK_ratio: round K's mean milliseconds per timed
 *     step (forward, backward, update of every parameter, the loss) and
 *     their ratio (PyTorch's own lines, resnet18_train_torch_ms, are
 *     echoed as it prints them)
 *   resnet18_train_roundK_cpu_ms, resnet18_train_roundK_cpu_ratio: the
 *     same in CPU milliseconds of the process per step (mxc's own, and
 *     PyTorch's resnet18_train_torch_cpu_ms): what other jobs' load on a
 *     shared machine changes least; resnet18_train_cpu_ratio_vs_torch
 *     their median (resnet18_train_cpu_ratio_min / _max their spread)
 *   resnet18_train_ms: the median of mxc's rounds
 *   resnet18_train_ratio_vs_torch: the median of the rounds' ratios (and
 *     _goal), resnet18_train_ratio_min / _max: their spread
 *   resnet18_train_loss_first / _last (mxc), the same with _torch, and
 *   resnet18_train_loss_maxdiff: the largest relative difference of the
 *     per-step losses (every step runs on the same batch, so the loss
 *     falls on both sides)
 * Returns 0, or 1 when the losses disagree beyond o->tolerance (PyTorch
 * unavailable: its figures are skipped with a message, and 0). Failures
 * of mxc exit the program with its message. */
int resnet_train_bench(const resnet_opts *o);

#endif /* MXC_BENCH_TRAIN_RESNET_H_ */
