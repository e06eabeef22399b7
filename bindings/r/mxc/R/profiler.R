# The profiler: what mxc does, as a Chrome trace (open it in
# ui.perfetto.dev) and as per-operator statistics. Ranges are per thread
# in mxc; R calls them from its one thread.

.profiler_states <- c(stop = 0L, run = 1L, pause = 2L)

mx_profiler_set_config <- function(...) {
  settings <- list(...)
  if (length(settings) == 0 || is.null(names(settings)) ||
      any(names(settings) == "")) {
    stop("mx_profiler_set_config: give settings as key = value")
  }
  for (key in names(settings)) {
    value <- settings[[key]]
    if (is.logical(value)) value <- if (isTRUE(value)) "1" else "0"
    .Call(C_R_swig_profiler_set_config, key, as.character(value))
  }
  invisible(NULL)
}

mx_profiler_set_state <- function(state = c("run", "pause", "stop")) {
  state <- match.arg(state)
  .Call(C_R_swig_profiler_set_state, .profiler_states[[state]])
  invisible(NULL)
}

mx_profiler_state <- function() {
  s <- .Call(C_R_swig_profiler_get_state, FALSE)
  names(.profiler_states)[match(s, .profiler_states)]
}

mx_profiler_dump <- function(finished = TRUE) {
  .Call(C_R_swig_profiler_dump, as.integer(isTRUE(finished)))
  invisible(NULL)
}

mx_profiler_dumps <- function() .Call(C_R_swig_profiler_dumps)

mx_profiler_stats <- function(json = FALSE, reset = FALSE) {
  .Call(C_R_swig_profiler_stats, as.integer(isTRUE(json)),
        as.integer(isTRUE(reset)))
}

mx_profiler_scope <- function(name, expr) {
  .Call(C_R_swig_profiler_range_begin, as.character(name))
  on.exit(.Call(C_R_swig_profiler_range_end))
  # expr is a promise: forcing it here runs it in the caller's frame.
  invisible(expr)
}

mx_profiler_mark <- function(name) {
  .Call(C_R_swig_profiler_mark, as.character(name))
  invisible(NULL)
}

mx_profiler_counter <- function(name, value) {
  .Call(C_R_swig_profiler_counter, as.character(name), as.double(value))
  invisible(NULL)
}
