#!/bin/bash
# A fit() epoch of the main job's MLP (784-512-256-10, batch 128, SGD
# momentum 0.9, Fashion-MNIST) from Java and from Go against the C
# executor path of bench/train (examples/fmnist.c: the same MLP, per-batch
# loss and accuracy too), each timed over BATCHES batches after a warm-up
# and scaled to 60000 images. Prints fit_epoch_s_c=, fit_epoch_s_java=,
# fit_epoch_s_go=, fit_epoch_java_ratio_vs_c=, fit_epoch_go_ratio_vs_c=
# (binding / C; goal <= 1.05: fit_epoch_ratio_goal=), then PyTorch's loop
# on the same MLP and batches (bench/train_torch.py, through bench/train):
# fit_epoch_s_torch=, fit_epoch_{c,java,go}_ratio_vs_torch= (mxc / torch;
# nan without python3-torch, or with --no-torch). Timings need a quiet
# machine; the smoke test (tests/bench) asserts none.
#   fit_bench.sh PREFIX_SH LIB HEADER PC_IN TRAIN_BIN MXC_JAR BENCH_JAR SRC_ROOT
#                [--batches N (100)] [--data-dir DIR] [--no-torch]
# SRC_ROOT holds bindings/go, bindings/swig and bench/bindings/go (the
# workspace, or a test's runfiles); the Go module is built in a copy.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4 train=$(readlink -f "$5")
mxc_jar=$(readlink -f "$6") bench_jar=$(readlink -f "$7") root=$(readlink -f "$8")
shift 8
batches=100 data=/usr/share/datasets/fashion-mnist torch=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-torch) torch=(--no-torch); shift ;;
    --batches) batches=$2; shift 2 ;;
    --data-dir) data=$2; shift 2 ;;
    *) echo "fit_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin"
trap 'chmod -R u+w "$MXC_PREFIX" 2>/dev/null; rm -rf "$MXC_PREFIX"' EXIT

value() { sed -n "s/^$1=//p" | tail -1; }

# bench/train runs its PyTorch peer from bench/train_torch.py under the
# working directory: the source root.
c_out=$(cd "$root" && "$train" --model mlp "${torch[@]}" --batches "$batches" --data-dir "$data")
c=$(value mlp_epoch_s_mxc <<<"$c_out")
torch_s=$(value mlp_epoch_s_torch <<<"$c_out")
[ -n "${torch_s:-}" ] || torch_s=nan
java=$(java -cp "$mxc_jar:$bench_jar" org.mxc.bench.FitBench "$batches" "$data" | value fit_epoch_s_java)
src=$MXC_PREFIX/src
mkdir -p "$src/bindings" "$src/bench/bindings"
cp -rL "$root/bindings/go" "$root/bindings/swig" "$src/bindings/"
cp -rL "$root/bench/bindings/go" "$src/bench/bindings/"
chmod -R u+w "$src"
go=$(cd "$src/bench/bindings/go" && GOCACHE="$MXC_PREFIX/gocache" GOPATH="$MXC_PREFIX/gopath" \
  GOPROXY=off GOFLAGS=-mod=mod HOME="$MXC_PREFIX" go run ./fit -batches "$batches" -data-dir "$data" |
  value fit_epoch_s_go)
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.3f", a / b; else print "nan" }'
}
echo "fit_batches=$batches"
echo "fit_epoch_s_c=$c"
echo "fit_epoch_s_java=$java"
echo "fit_epoch_s_go=$go"
echo "fit_epoch_java_ratio_vs_c=$(ratio "$java" "$c")"
echo "fit_epoch_go_ratio_vs_c=$(ratio "$go" "$c")"
echo "fit_epoch_ratio_goal=1.05"
echo "fit_epoch_s_torch=$torch_s"
for who in c java go; do
  echo "fit_epoch_${who}_ratio_vs_torch=$(ratio "${!who}" "$torch_s")"
done
