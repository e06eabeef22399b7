# Symbolic graphs and executors.

mx_symbol_variable <- function(name) {
  .Call(C_R_swig_symbol_variable, name, FALSE)
}

mx_symbol_op <- function(op, ..., params = list(), name = "") {
  .Call(C_R_swig_symbol_op, .op_handle(op), .kv(params), name, list(...),
        FALSE)
}

mx_symbol_group <- function(...) {
  .Call(C_R_swig_symbol_group, list(...), FALSE)
}

.str_list <- function(l) .Call(C_R_swig_r_str_list_to_r, l, FALSE)

mx_symbol_arguments <- function(symbol) {
  .str_list(.Call(C_R_swig_symbol_list_arguments, symbol, FALSE))
}

mx_symbol_outputs <- function(symbol) {
  .str_list(.Call(C_R_swig_symbol_list_outputs, symbol, FALSE))
}

mx_symbol_to_json <- function(symbol) {
  .Call(C_R_swig_symbol_to_json, symbol)
}

mx_symbol_from_json <- function(json) {
  .Call(C_R_swig_symbol_from_json, json, FALSE)
}

print.mx_symbol <- function(x, ...) {
  if (mx_is_freed(x)) cat("<mx_symbol (freed)>\n")
  else cat("<mx_symbol outputs: ", paste(mx_symbol_outputs(x), collapse = ", "),
           ">\n", sep = "")
  invisible(x)
}

mx_simple_bind <- function(symbol, shapes, grad_req = "write", device = NULL) {
  device <- .as_device(device)
  nm <- names(shapes)
  if (length(shapes) == 0L || is.null(nm) || any(nm == ""))
    stop("shapes must be a named list, e.g. list(data = c(128, 784))",
         call. = FALSE)
  kv <- as.vector(rbind(nm, vapply(shapes, function(s)
    paste0("(", paste(sprintf("%.0f", as.double(s)), collapse = ","), ")"), "")))
  .Call(C_R_swig_executor_simple_bind_on, symbol, kv, .req_code(grad_req),
        device$type, device$id, FALSE)
}

mx_forward <- function(executor, is_train = FALSE) {
  .Call(C_R_swig_executor_forward, executor, as.integer(is_train))
  invisible(mx_exec_outputs(executor))
}

mx_backward_exec <- function(executor) {
  .Call(C_R_swig_executor_backward, executor)
  invisible(NULL)
}

mx_exec_outputs <- function(executor) {
  n <- .Call(C_R_swig_executor_num_outputs, executor, FALSE)
  lapply(seq_len(n) - 1L,
         function(i) .Call(C_R_swig_executor_output, executor, i, FALSE))
}

mx_exec_arg <- function(executor, name) {
  .Call(C_R_swig_executor_arg, executor, name, FALSE)
}

mx_exec_grad <- function(executor, name) {
  .Call(C_R_swig_executor_grad, executor, name, FALSE)
}

mx_exec_aux <- function(executor, name) {
  .Call(C_R_swig_executor_aux, executor, name, FALSE)
}

print.mx_executor <- function(x, ...) {
  cat(if (mx_is_freed(x)) "<mx_executor (freed)>\n" else "<mx_executor>\n")
  invisible(x)
}
