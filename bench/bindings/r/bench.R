# Per-call cost of a tiny operator invoke from R against the same loop in
# C, in this one process: elemwise_add of two float32 arrays of 4
# elements, a new output each call freed at once, mx_wait_all every 1000
# calls. The C loop is mxcb_r_bench_c_loop in the package's own wrapper
# (bindings/r/mxc_r.i; internal, reached with :::). The two alternate for
# a few rounds and the best round of each counts.
#
#   Rscript bench/bindings/r/bench.R [CALLS] [ROUNDS]   (mxc installed)
# Prints name=value lines; r_overhead_us = r_invoke_us - c_invoke_us.
suppressPackageStartupMessages(library(mxc))
args <- commandArgs(trailingOnly = TRUE)
calls <- if (length(args) >= 1) as.integer(args[1]) else 100000L
rounds <- if (length(args) >= 2) as.integer(args[2]) else 5L

a <- mx_array(c(1, 2, 3, 4))
b <- mx_array(c(4, 3, 2, 1))

per_call_us <- function(f, n) {
  t0 <- Sys.time()
  f(n)
  mx_wait_all()
  as.numeric(Sys.time() - t0, units = "secs") * 1e6 / n
}
# The idiomatic call: mx_invoke by name, explicit free.
r_loop <- function(n) {
  for (i in seq_len(n)) {
    o <- mx_invoke("elemwise_add", a, b)
    mx_free(o)
    if (i %% 1000L == 0L) mx_wait_all()
  }
}
# The arithmetic operator (broadcast_add), explicit free.
plus_loop <- function(n) {
  for (i in seq_len(n)) {
    o <- a + b
    mx_free(o)
    if (i %% 1000L == 0L) mx_wait_all()
  }
}
c_loop <- function(n) .Call(mxc:::C_R_swig_r_bench_c_loop, n, FALSE)

invisible(r_loop(1000L)) # warm-up: operator lookup, byte compilation
invisible(c_loop(1000L))
best <- c(c = Inf, r = Inf, plus = Inf)
for (k in seq_len(rounds)) {
  best["c"] <- min(best["c"], c_loop(calls))
  best["r"] <- min(best["r"], per_call_us(r_loop, calls))
  best["plus"] <- min(best["plus"], per_call_us(plus_loop, calls))
}
cat(sprintf("calls=%d\nrounds=%d\n", calls, rounds))
cat(sprintf("c_invoke_us=%.3f\n", best["c"]))
cat(sprintf("r_invoke_us=%.3f\n", best["r"]))
cat(sprintf("r_overhead_us=%.3f\n", best["r"] - best["c"]))
cat(sprintf("r_plus_us=%.3f\n", best["plus"]))
