# Memory scopes: free the arrays made while evaluating an expression.
#
# with_scope() opens a scope of the C library (mxc_scope_begin), evaluates
# the expression and ends the scope, freeing every array, symbol,
# executor, iterator, predictor, block, optimizer or fit made meanwhile --
# except the value of the expression, when it is one of them, an mx_model
# or a list of them, which moves
# to the enclosing scope (or to none). So a training step's temporaries
# are freed at once instead of when R's collector finds them.

# The open scopes of with_scope, innermost last (R runs on one thread, as
# the C library's scope stack is per thread): what mx_current_scope gives.
.scopes <- new.env(parent = emptyenv())
.scopes$open <- list()

with_scope <- function(expr) {
  s <- .Call(C_R_swig_scope_begin)
  depth <- length(.scopes$open) + 1L
  .scopes$open[[depth]] <- s
  open <- TRUE
  # Ends the scope also when expr fails.
  on.exit({
    length(.scopes$open) <- depth - 1L
    if (open) .Call(C_R_swig_scope_end, s)
  })
  value <- expr  # the promise is evaluated here, in the caller's frame
  .scope_keep_value(value, s)
  open <- FALSE
  length(.scopes$open) <- depth - 1L
  .Call(C_R_swig_scope_end, s)
  value
}

# The innermost open with_scope's scope (an mx_scope, valid until that
# with_scope returns), or NULL outside every with_scope.
mx_current_scope <- function() {
  n <- length(.scopes$open)
  if (n == 0L) NULL else .scopes$open[[n]]
}

.check_scope <- function(scope) {
  if (!is.null(scope) && !inherits(scope, "mx_scope"))
    stop("scope must be NULL or an mx_scope (from mx_current_scope())",
         call. = FALSE)
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

# Live handles and bytes of scope (its own handles, not those of scopes
# inside it), or of the whole process for NULL.
mx_memory_stats <- function(scope = NULL) {
  .check_scope(scope)
  s <- .Call(C_R_swig_r_scope_stats, scope)
  list(handles = s[[1]], bytes = s[[2]])
}

mx_handle_dump <- function(scope = NULL) {
  .check_scope(scope)
  .Call(C_R_swig_handle_dump, scope)
}

mx_handle_debug <- function(on = TRUE) {
  .Call(C_R_swig_handle_debug_set, as.integer(isTRUE(on)))
  invisible(NULL)
}
