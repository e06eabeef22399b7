# Memory scopes from R: with_scope frees what its expression made (the
# library's live-handle count comes back), the value survives, and a loop
# of large dropped arrays stays bounded by the collector pacing. Counts
# are read after gc(), so that earlier garbage cannot change them.

live <- function() {
  gc()
  mx_memory_stats()$handles
}

test_that("with_scope frees everything made inside and keeps its value", {
  before <- live()
  x <- mx_array(c(-1, 2, -3, 4))
  inner <- NULL
  y <- with_scope({
    inner <- mx_invoke("relu", x)
    mx_invoke("sum", inner)
  })
  expect_equal(as.vector(as.array(y)), 6)
  expect_error(as.array(inner), class = "mxc_error")
  expect_equal(live(), before + 2) # x and y
  # A list value keeps each array; an error still ends the scope.
  v <- with_scope(list(mx_zeros(2), mx_ones(3)))
  expect_equal(as.vector(as.array(v[[2]])), c(1, 1, 1))
  expect_error(with_scope({
    mx_zeros(5)
    stop("boom")
  }), "boom")
  expect_equal(live(), before + 4)
  mx_free(x); mx_free(y); mx_free(v[[1]]); mx_free(v[[2]])
  expect_equal(live(), before)
})

test_that("nested scopes and mx_scope_keep", {
  before <- live()
  out <- with_scope({
    a <- mx_array(1:3)
    b <- with_scope(mx_scope_keep(mx_array(4:6)))  # kept once, not twice
    c <- with_scope(a)  # made before the inner scope: left where it is
    as.vector(as.array(b) + as.array(c))
  })
  expect_equal(out, c(5, 7, 9))
  expect_equal(live(), before)
})

test_that("the dump names the making function", {
  with_scope({
    a <- mx_zeros(c(2, 2))
    expect_match(mx_handle_dump(), "16 bytes, made by mxc_op_invoke")
  })
})

test_that("a loop dropping large arrays stays bounded (collector pacing)", {
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status")
  skip_if(nzchar(Sys.getenv("MXC_SANITIZER")), "sanitizer build: RSS is not flat")
  rss_mib <- function() {
    line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
    as.numeric(gsub("[^0-9]", "", line)) / 1024
  }
  gc()
  before <- rss_mib()
  peak <- before
  # 300 arrays of 4 MiB, dropped without mx_free: 1.2 GiB if nothing
  # collected them; R's heap alone sees some 100 bytes per array.
  for (i in 1:300) {
    a <- mx_zeros(c(1024, 1024))
    if (i %% 20 == 0) peak <- max(peak, rss_mib())
  }
  mx_wait_all()
  # Threshold 256 MiB (MXC_R_GC_BYTES): twice that plus noise at most.
  expect_lt(peak - before, 700)
})

test_that("per-scope stats and dump see only that scope's handles", {
  expect_null(mx_current_scope())
  outer_bytes <- NULL
  with_scope({
    outer <- mx_current_scope()
    expect_s3_class(outer, "mx_scope")
    a <- mx_zeros(c(2, 3))  # 24 bytes of float32
    with_scope({
      inner <- mx_current_scope()
      b <- mx_zeros(c(4, 4))
      c <- mx_zeros(5)
      # Counted against sizes computed here, not read from mxc.
      expect_equal(mx_memory_stats(inner), list(handles = 2, bytes = 4 * (16 + 5)))
      expect_equal(mx_memory_stats(outer), list(handles = 1, bytes = 4 * 6))
      lines <- strsplit(mx_handle_dump(inner), "\n")[[1]]
      expect_length(lines, 2)
      expect_match(lines, "bytes, made by mxc_op_invoke")
      expect_match(lines, "in a scope of depth 2")
      expect_false(any(grepl("24 bytes", lines)))
    })
    expect_identical(mx_current_scope(), outer)
    expect_equal(mx_memory_stats(outer)$handles, 1)
    # An ended scope is an error, not a read of freed memory.
    expect_error(mx_memory_stats(inner), "scope")
    outer_bytes <- mx_memory_stats(outer)$bytes
  })
  expect_equal(outer_bytes, 24)
  expect_null(mx_current_scope())
  expect_error(mx_memory_stats("x"), "mx_scope")
  # An error inside still pops the scope.
  expect_error(with_scope(stop("boom")), "boom")
  expect_null(mx_current_scope())
})
