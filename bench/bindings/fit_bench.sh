#!/bin/bash
# A fit() epoch of the main job's MLP (784-512-256-10, batch 128, SGD
# momentum 0.9, Fashion-MNIST) from Java and from Go against the C
# executor path of bench/train (examples/fmnist.c: the same MLP, per-batch
# loss and accuracy too), each timed over BATCHES batches after a warm-up
# and scaled to 60000 images; Java's and Go's networks hybridized (see
# FitBench.java, fit/main.go). Prints fit_epoch_s_c=, fit_epoch_s_java=,
# fit_epoch_s_go=, fit_epoch_java_ratio_vs_c=, fit_epoch_go_ratio_vs_c=
# (binding / C; goal <= 1.05: fit_epoch_ratio_goal=), then PyTorch's loop
# on the same MLP and batches (bench/train_torch.py, through bench/train):
# fit_epoch_s_torch=, fit_epoch_{c,java,go}_ratio_vs_torch= (mxc / torch;
# nan without python3-torch, or with --no-torch). Timings need a quiet
# machine; the smoke test (tests/bench) asserts none.
# --rounds R runs the three R times in turn (C, Java, Go, C, ...) and the
# figures are each one's median (min and max printed too): one round's
# ratios moved by 30% between runs on a quiet 2-core machine
# (2026-11-28), more than the 5% the goal allows.
#   fit_bench.sh PREFIX_SH LIB HEADER PC_IN TRAIN_BIN MXC_JAR BENCH_JAR SRC_ROOT
#                [--batches N (100)] [--rounds R (1)] [--data-dir DIR]
#                [--no-torch]
# SRC_ROOT holds bindings/go, bindings/swig and bench/bindings/go (the
# workspace, or a test's runfiles); the Go module is built in a copy.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4 train=$(readlink -f "$5")
mxc_jar=$(readlink -f "$6") bench_jar=$(readlink -f "$7") root=$(readlink -f "$8")
shift 8
batches=100 rounds=1 data=/usr/share/datasets/fashion-mnist torch=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-torch) torch=(--no-torch); shift ;;
    --batches) batches=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --data-dir) data=$2; shift 2 ;;
    *) echo "fit_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin"
trap 'chmod -R u+w "$MXC_PREFIX" 2>/dev/null; rm -rf "$MXC_PREFIX"' EXIT

value() { sed -n "s/^$1=//p" | tail -1; }

src=$MXC_PREFIX/src
mkdir -p "$src/bindings" "$src/bench/bindings"
cp -rL "$root/bindings/go" "$root/bindings/swig" "$src/bindings/"
cp -rL "$root/bench/bindings/go" "$src/bench/bindings/"
chmod -R u+w "$src"
gobin=$MXC_PREFIX/fit_go
(cd "$src/bench/bindings/go" && GOCACHE="$MXC_PREFIX/gocache" GOPATH="$MXC_PREFIX/gopath" \
  GOPROXY=off GOFLAGS=-mod=mod HOME="$MXC_PREFIX" go build -o "$gobin" ./fit)

# bench/train runs its PyTorch peer from bench/train_torch.py under the
# working directory: the source root; PyTorch runs in the first round.
run_c() {
  (cd "$root" && "$train" --model mlp "$@" --batches "$batches" --data-dir "$data")
}
run_java() {
  java -cp "$mxc_jar:$bench_jar" org.mxc.bench.FitBench "$batches" "$data" | value fit_epoch_s_java
}
run_go() { "$gobin" -batches "$batches" -data-dir "$data" | value fit_epoch_s_go; }
cs=() javas=() gos=() torch_s=nan
for ((r = 1; r <= rounds; r++)); do
  if [ "$r" = 1 ]; then
    c_out=$(run_c "${torch[@]}")
    torch_s=$(value mlp_epoch_s_torch <<<"$c_out")
    [ -n "${torch_s:-}" ] || torch_s=nan
  else
    c_out=$(run_c --no-torch)
  fi
  cs+=("$(value mlp_epoch_s_mxc <<<"$c_out")")
  javas+=("$(run_java)")
  gos+=("$(run_go)")
done
# stat median|min|max VALUES...
stat() {
  local how=$1
  shift
  printf '%s\n' "$@" | sort -g | awk -v how="$how" '{ v[NR] = $1 } END {
    if (how == "min") print v[1]; else if (how == "max") print v[NR];
    else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
c=$(stat median "${cs[@]}") java=$(stat median "${javas[@]}") go=$(stat median "${gos[@]}")
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.3f", a / b; else print "nan" }'
}
echo "fit_batches=$batches"
echo "fit_rounds=$rounds"
echo "fit_epoch_s_c=$c"
echo "fit_epoch_s_java=$java"
echo "fit_epoch_s_go=$go"
for who in c java go; do
  arr="${who}s[@]"
  echo "fit_epoch_s_${who}_min=$(stat min "${!arr}")"
  echo "fit_epoch_s_${who}_max=$(stat max "${!arr}")"
done
echo "fit_epoch_java_ratio_vs_c=$(ratio "$java" "$c")"
echo "fit_epoch_go_ratio_vs_c=$(ratio "$go" "$c")"
echo "fit_epoch_ratio_goal=1.05"
echo "fit_epoch_s_torch=$torch_s"
for who in c java go; do
  echo "fit_epoch_${who}_ratio_vs_torch=$(ratio "${!who}" "$torch_s")"
done
