# Imperative automatic differentiation. Recording and training mode are
# per thread in mxc; R calls them from its one thread.

mx_record <- function(expr, train_mode = TRUE) {
  prev_rec <- .Call(C_R_swig_set_recording, 1L, FALSE)
  prev_train <- .Call(C_R_swig_set_training, as.integer(train_mode), FALSE)
  on.exit({
    .Call(C_R_swig_set_recording, prev_rec, FALSE)
    .Call(C_R_swig_set_training, prev_train, FALSE)
  })
  # expr is a promise: forcing it here runs it in the caller's frame.
  invisible(expr)
}

mx_mark_variables <- function(vars, grad_req = "write") {
  req <- .req_code(grad_req)
  for (v in .as_list(vars)) {
    .check_array(v, "every variable")
    g <- mx_invoke("zeros_like", v)
    .Call(C_R_swig_autograd_mark, v, g, req)
  }
  invisible(vars)
}

mx_backward <- function(heads, retain_graph = FALSE) {
  .Call(C_R_swig_autograd_backward, .as_list(heads), as.integer(retain_graph))
  invisible(NULL)
}

mx_grad <- function(x) {
  .check_array(x)
  .Call(C_R_swig_autograd_grad, x, FALSE)
}
