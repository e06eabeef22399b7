# A million small arrays made inside with_scope() blocks (1000 per block,
# half by mx_array, half as operator results), never freed by hand and
# still referenced from R when their block ends: each block's end frees
# its arrays at once, so the live-handle count is back
# to where it was after every block (exactly: nothing waits for R's
# collector) and resident memory stays flat.
#
#   Rscript bindings/r/tests/million_scopes.R [N]   (mxc installed; N = 1e6)
#
# Measures VmRSS after a warm-up of N/10 arrays and then every N/10
# arrays; fails when the peak or the end exceeds the warm-up value by
# 64 MiB (the reasoning of million.R: a leak of a million arrays would
# hold about 1 GiB), or when a block leaves a handle behind.
suppressPackageStartupMessages(library(mxc))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
limit_mib <- 64
per_scope <- 1000

rss_mib <- function() {
  line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}

x <- c(1, 2, 3, 4)
keep <- mx_array(x)
# One block of k arrays, all still referenced from R when it ends (so the
# scope's end, not R's collector, is what frees them); returns the
# block's own live handles at its end (mx_memory_stats of the scope),
# which must be all k.
block <- function(k) {
  with_scope({
    arrays <- vector("list", k)
    for (j in seq_len(k)) {
      arrays[[j]] <- if (j %% 2 == 0) mx_array(x) else mx_invoke("elemwise_add", keep, keep)
    }
    mx_memory_stats(mx_current_scope())$handles
  })
}
blocks <- max(1, n %/% per_scope)
step <- max(1, blocks %/% 10)
for (i in seq_len(step)) block(per_scope)
mx_wait_all()
handles0 <- mx_memory_stats()$handles
base <- rss_mib()
peak <- base
t0 <- Sys.time()
for (i in seq_len(blocks)) {
  inside <- block(per_scope)
  if (inside != per_scope) {
    cat(sprintf("FAIL: block %d held %d handles at its end, want %d\n",
                i, inside, per_scope))
    quit(status = 1)
  }
  left <- mx_memory_stats()$handles
  if (left != handles0) {
    cat(sprintf("FAIL: %d live handles after block %d, %d before\n",
                left, i, handles0))
    quit(status = 1)
  }
  if (i %% step == 0) {
    peak <- max(peak, rss_mib())
    cat(sprintf("arrays=%d rss_mib=%.1f\n", i * per_scope, rss_mib()))
  }
}
mx_wait_all()
end <- rss_mib()
cat(sprintf(paste("n=%d in scopes of %d: warmup_rss_mib=%.1f peak_rss_mib=%.1f",
                  "end_rss_mib=%.1f seconds=%.1f\n"),
            blocks * per_scope, per_scope, base, peak, end,
            as.numeric(Sys.time() - t0, units = "secs")))
if (nzchar(Sys.getenv("MXC_SANITIZER"))) {
  # As million.R: ASan's quarantine and shadow memory; the handle counts
  # above were checked, and LeakSanitizer checks for leaks at exit.
  cat("SKIPPED the resident-memory bound: sanitizer build\n")
} else if (peak - base > limit_mib || end - base > limit_mib) {
  cat(sprintf("FAIL: resident memory grew by more than %d MiB\n", limit_mib))
  quit(status = 1)
}
cat("PASS\n")
