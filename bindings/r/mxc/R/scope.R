# Memory scopes: free the arrays made while evaluating an expression.
#
# with_scope() opens a scope of the C library (mxc_scope_begin), evaluates
# the expression and ends the scope, freeing every array, symbol,
# executor, iterator, predictor, block, optimizer or fit made meanwhile --
# except the value of the expression, when it is one of them, an mx_model
# or a list of them, which moves
# to the enclosing scope (or to none). So a training step's temporaries
# are freed at once instead of when R's collector finds them.

with_scope <- function(expr) {
  s <- .Call(C_R_swig_scope_begin)
  open <- TRUE
  # Ends the scope also when expr fails.
  on.exit(if (open) .Call(C_R_swig_scope_end, s))
  value <- expr  # the promise is evaluated here, in the caller's frame
  .scope_keep_value(value, s)
  open <- FALSE
  .Call(C_R_swig_scope_end, s)
  value
}

# Moves the arrays (blocks, optimizers, fits, models) of a with_scope
# value made inside scope s (not those made before it, nor those already
# kept) out of s.
.scope_keep_value <- function(value, s) {
  if (inherits(value, "mx_ndarray")) {
    .Call(C_R_swig_scope_keep_if_in, value, s)
  } else if (inherits(value, c("mx_block", "mx_optimizer", "mx_fit"))) {
    .Call(C_R_swig_r_nn_keep_if_in, value, s, FALSE)
  } else if (inherits(value, "mx_model")) {
    for (v in value[c("net", "loss", "optimizer", "fit")]) {
      .scope_keep_value(v, s)
    }
  } else if (is.list(value) && !is.object(value)) {
    for (v in value) .scope_keep_value(v, s)
  }
}

mx_scope_keep <- function(x, detach = FALSE) {
  .check_array(x, "x")
  .Call(C_R_swig_scope_keep_array, x, as.integer(isTRUE(detach)))
  invisible(x)
}

mx_memory_stats <- function() {
  s <- .Call(C_R_swig_r_scope_stats, NULL)
  list(handles = s[[1]], bytes = s[[2]])
}

mx_handle_dump <- function() .Call(C_R_swig_handle_dump, NULL)

mx_handle_debug <- function(on = TRUE) {
  .Call(C_R_swig_handle_debug_set, as.integer(isTRUE(on)))
  invisible(NULL)
}
