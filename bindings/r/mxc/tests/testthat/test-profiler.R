test_that("the trace parses as JSON and holds the run's events", {
  skip_if_not_installed("jsonlite")
  on.exit(mx_profiler_set_state("stop"))
  mx_profiler_set_state("stop")
  mx_profiler_set_config(profile_all = TRUE, profile_engine = FALSE)
  mx_profiler_set_state("run")
  expect_identical(mx_profiler_state(), "run")
  a <- mx_array(array(c(-1, 2, -3, 4), c(2, 2)))
  mx_profiler_scope("r scope", {
    for (i in 1:3) r <- mx_invoke("relu", a)
  })
  mx_profiler_mark("r mark")
  mx_wait_all()
  expect_equal(as.array(r), array(c(0, 2, 0, 4), c(2, 2)))
  trace <- jsonlite::fromJSON(mx_profiler_dumps(), simplifyVector = FALSE)
  ev <- trace$traceEvents
  key <- vapply(ev, function(e) paste0(if (is.null(e$cat)) "" else e$cat, "/", e$name), "")
  expect_equal(sum(key == "operator/relu"), 3)
  expect_equal(sum(key == "user/r scope"), 1)
  expect_equal(sum(key == "user/r mark"), 1)
  stats <- jsonlite::fromJSON(mx_profiler_stats(json = TRUE))
  expect_equal(stats$spans$operator$relu$calls, 3)
  expect_match(mx_profiler_stats(reset = TRUE), "relu")
})

test_that("bad profiler settings are errors", {
  expect_error(mx_profiler_set_config(no_such_key = TRUE), "no_such_key")
  expect_error(mx_profiler_set_state("sleep"))
})
