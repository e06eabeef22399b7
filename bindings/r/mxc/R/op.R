# Operators of the registry, invoked by name.

mx_invoke <- function(op, ..., params = list(), out = NULL) {
  h <- if (is.character(op) && length(op) == 1L) .op_cache[[op]]
  if (is.null(h)) h <- .op_handle(op)
  # Hot path: no parameters, a new output, an operator already seen with
  # one output. Two environment lookups and one native call.
  # (Primitives only: each closure call costs R a fraction of a microsecond.)
  if (length(params) == 0L && is.null(out)) {
    nout <- .nout_cache[[op]]
    if (!is.null(nout) && nout == 1L)
      return(.Call(C_R_swig_op_invoke, h, NULL, list(...), NULL, FALSE))
  }
  kv <- .kv(params)
  inputs <- list(...)
  if (!is.null(out)) {
    .Call(C_R_swig_op_invoke, h, kv, inputs, out, FALSE)
    return(invisible(out))
  }
  # Output counts depend on the parameters; without any, cache them.
  if (is.null(kv)) {
    nout <- .nout_cache[[op]]
    if (is.null(nout)) {
      nout <- .Call(C_R_swig_op_num_outputs, h, NULL, FALSE)
      assign(op, nout, envir = .nout_cache)
    }
  } else {
    nout <- .Call(C_R_swig_op_num_outputs, h, kv, FALSE)
  }
  if (nout == 1L) return(.Call(C_R_swig_op_invoke, h, kv, inputs, NULL, FALSE))
  o <- .Call(C_R_swig_op_invoke_multi, h, kv, inputs, FALSE)
  lapply(seq_len(nout) - 1L,
         function(i) .Call(C_R_swig_outputs_take, o, i, FALSE))
}

mx_ops <- function() {
  n <- .Call(C_R_swig_op_count, FALSE)
  vapply(seq_len(n) - 1L,
         function(i) .Call(C_R_swig_op_name, .Call(C_R_swig_op_at, i, FALSE)),
         "")
}
