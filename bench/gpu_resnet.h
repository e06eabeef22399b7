/* bench/gpu's ResNet-50 training step (issue 17): batch 64 of 224 x 224
 * images by default, the graph of scripts/make_resnet.py
 * (resnet50_train-symbol.json, torchvision's layout), simple_bind on
 * gpu(0) (or the CPU with --cpu), forward + backward + sgd_mom_update of
 * every parameter on the device, against PyTorch eager on the same device
 * (bench/gpu_resnet_torch.py: the same weights, batch and optimizer) in
 * alternating rounds. See gpu_resnet.c for the figures it prints. */
#ifndef MXC_BENCH_GPU_RESNET_H_
#define MXC_BENCH_GPU_RESNET_H_

#define R50_MAX_ROUNDS 20

typedef struct r50_opts {
  int dev_type; /* MXC_DEVICE_GPU (gpu(0)) or MXC_DEVICE_CPU (--cpu) */
  int batch, image, warmup, steps, rounds;
  int bind_flags; /* MXC_BIND_*: the executor's default (fusion on) */
  double lr;
  double loss_tol;          /* of step 0's loss (relative) */
  double update_tol;        /* of step 0's weight change (relative 2-norm) */
  const char *symbol;       /* resnet50_train-symbol.json */
  const char *python;       /* runs the peer; NULL or "": no PyTorch */
  const char *torch_script; /* bench/gpu_resnet_torch.py */
} r50_opts;

/* Defaults: gpu(0), batch 64, image 224, 2 warm-up and 5 timed steps, 3
 * rounds, lr 0.01, tolerances 1e-3 for step 0's loss and 0.1 for its
 * weight change (relative, see gpu_resnet.c), bound with the executor's
 * default flags: its fusion turns the backward's gradient sums and relu
 * gradients (add + _backward_Activation) into fused nodes, which the GPU
 * compiles at run time (--no-fusion runs them one by one). */
void r50_opts_init(r50_opts *o);

/* Parses one option of argv at *i (advancing past its value): 1 when it
 * was a ResNet-50 option, 0 when not, -1 with a message when its value is
 * bad. Options: --cpu, --batch B, --image S, --warmup N, --steps N,
 * --rounds R, --lr X, --loss-tolerance X, --update-tolerance X,
 * --no-fusion,
 * --symbol PATH, --python PATH, --torch-script PATH, --no-torch. */
int r50_parse(r50_opts *o, int argc, char **argv, int *i);

/* Runs the benchmark; 0, or 1 when mxc and PyTorch disagree beyond the
 * tolerances ("FAIL" on stderr). Errors of mxc exit the program with
 * their message; a missing or failing PyTorch is a resnet50_train_gpu_peer
 * line and no ratio (0). */
int bench_gpu_resnet50(const r50_opts *o);

#endif /* MXC_BENCH_GPU_RESNET_H_ */
