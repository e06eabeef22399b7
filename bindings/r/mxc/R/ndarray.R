# Arrays: creation from R data, conversion back, printing, arithmetic.
#
# Layout rule (see ?mx_array): an R array of dim c(a, b, c) becomes an mxc
# array of shape (a, b, c) holding the same element at the same index.
# R stores column-major and mxc row-major, so the data is transposed on
# the way in and out (aperm); mxc's row-major operators then agree with
# R's own (dot with %*%, sum over axis 0 with colSums, ...).

mx_array <- function(x, dtype = "float32", device = NULL) {
  code <- .dtype_code(dtype)
  device <- .as_device(device)
  if (inherits(x, "mx_ndarray")) x <- as.array(x)
  if (!(is.numeric(x) || is.logical(x)) || is.object(x))
    stop("x must be a numeric or logical vector, matrix or array",
         call. = FALSE)
  d <- dim(x)
  if (is.null(d) || length(d) == 1L) {
    # The common case first: no transposition, the C side reads x as is.
    a <- .empty_on(length(x), code, device)
    .Call(C_R_swig_r_ndarray_from_r, a, x)
    return(a)
  }
  a <- .empty_on(d, code, device)
  # aperm() with no perm reverses the dimensions: its column-major data is
  # the row-major data of x.
  .Call(C_R_swig_r_ndarray_from_r, a, aperm(x))
  a
}

# On a GPU the values are made on the host and copied (the fill operators
# have no GPU kernel).
mx_zeros <- function(shape, dtype = "float32", device = NULL) {
  .dtype_code(dtype)
  device <- .as_device(device)
  a <- mx_invoke("_zeros", params = list(shape = as.double(shape), dtype = dtype))
  if (.is_gpu(device)) mx_copyto(a, device) else a
}

mx_ones <- function(shape, dtype = "float32", device = NULL) {
  .dtype_code(dtype)
  device <- .as_device(device)
  a <- mx_invoke("_ones", params = list(shape = as.double(shape), dtype = dtype))
  if (.is_gpu(device)) mx_copyto(a, device) else a
}

mx_assign <- function(dst, value) {
  .check_array(dst, "dst")
  if (inherits(value, "mx_ndarray")) {
    .Call(C_R_swig_ndarray_copy, value, dst)
    return(invisible(dst))
  }
  d <- dim(value)
  shape <- .shape(dst)
  if (is.null(d) && length(value) == prod(shape)) {
    # A plain vector of the right length fills dst in row-major order.
    .Call(C_R_swig_r_ndarray_from_r, dst, value)
  } else if (length(d) == length(shape) && all(d == shape)) {
    .Call(C_R_swig_r_ndarray_from_r, dst,
          if (length(d) >= 2L) aperm(value) else value)
  } else {
    stop("value has dim (", paste(if (is.null(d)) length(value) else d,
                                  collapse = ","),
         ") but dst has shape (", paste(shape, collapse = ","), ")",
         call. = FALSE)
  }
  invisible(dst)
}

mx_free <- function(x) {
  if (inherits(x, "mx_ndarray")) .Call(C_R_swig_delete_NDArrayHandle, x)
  else if (inherits(x, "mx_symbol")) .Call(C_R_swig_delete_SymbolHandle, x)
  else if (inherits(x, "mx_executor")) .Call(C_R_swig_delete_ExecutorHandle, x)
  else if (inherits(x, "mx_data_iter")) .Call(C_R_swig_delete_DataIterHandle, x)
  else if (inherits(x, "mx_predictor")) .Call(C_R_swig_delete_PredictorHandle, x)
  else if (inherits(x, c("mx_block", "mx_optimizer", "mx_fit")))
    .Call(C_R_swig_r_nn_free, x, FALSE)
  else if (inherits(x, "mx_model")) .model_free(x)
  else if (inherits(x, "mx_kvstore")) .Call(C_R_swig_delete_KVStoreHandle, x)
  else if (inherits(x, "mx_recordio")) {
    # A writer's buffered records reach the file first; freed either way.
    on.exit(.Call(C_R_swig_delete_RecordIOHandle, x))
    if (!mx_is_freed(x)) .Call(C_R_swig_recordio_flush, x)
  }
  else stop("x must be an mxc object (mx_ndarray, mx_symbol, ...)",
            call. = FALSE)
  invisible(NULL)
}

mx_is_freed <- function(x) as.logical(.Call(C_R_swig_r_is_null, x, FALSE))

mx_wait_all <- function() invisible(.Call(C_R_swig_wait_all))

mx_seed <- function(seed) invisible(.Call(C_R_swig_random_seed, as.double(seed)))

mx_version <- function() .Call(C_R_swig_version_string)

mx_initialize <- function(x, method = "xavier", params = list()) {
  .check_array(x)
  .Call(C_R_swig_init_array, x, method, .kv(params))
  invisible(x)
}

mx_accuracy <- function(pred, label) {
  .Call(C_R_swig_metric_correct, pred, label, FALSE) / dim(pred)[1L]
}

dim.mx_ndarray <- function(x) {
  s <- .shape(x)
  if (all(s <= .Machine$integer.max)) as.integer(s) else s
}

length.mx_ndarray <- function(x) {
  n <- .Call(C_R_swig_ndarray_size, x, FALSE)
  if (n <= .Machine$integer.max) as.integer(n) else n
}

as.array.mx_ndarray <- function(x, ...) {
  v <- .Call(C_R_swig_r_ndarray_to_r, x, FALSE)
  d <- .shape(x)
  if (length(d) >= 2L) aperm(array(v, rev(d)))
  else array(v, if (length(d) == 0L) 1L else d) # 0-d: one element
}

as.vector.mx_ndarray <- function(x, mode = "any") {
  as.vector(as.array(x), mode)
}

format.mx_ndarray <- function(x, ...) {
  if (mx_is_freed(x)) return("<mx_ndarray (freed)>")
  d <- .shape(x)
  stype <- c("default", "row_sparse", "csr")[
    .Call(C_R_swig_ndarray_stype, x, FALSE) + 1L]
  paste0("<mx_ndarray ", .dtype_name(.Call(C_R_swig_ndarray_dtype, x, FALSE)),
         " (", paste(d, collapse = ","), ")",
         if (!is.na(stype) && stype != "default") paste0(" ", stype) else "",
         ">")
}

print.mx_ndarray <- function(x, n = 6L, ...) {
  cat(format(x), "\n", sep = "")
  if (!mx_is_freed(x) && .Call(C_R_swig_ndarray_stype, x, FALSE) == 0L) {
    v <- .Call(C_R_swig_r_ndarray_to_r, x, FALSE)
    cat("  [", paste(format(utils::head(v, n), digits = 4), collapse = " "),
        if (length(v) > n) " ..." else "", "] (row-major)\n", sep = "")
  }
  invisible(x)
}

# Operators of the Ops group: array op array broadcasts (broadcast_*,
# NumPy rules over mxc's row-major shapes); array op number and number op
# array use the *_scalar operators. Numbers must be single values.
.ops_binary <- c("+" = "broadcast_add", "-" = "broadcast_sub",
                 "*" = "broadcast_mul", "/" = "broadcast_div",
                 "^" = "broadcast_power", "==" = "broadcast_equal",
                 "!=" = "broadcast_not_equal", "<" = "broadcast_lesser",
                 ">" = "broadcast_greater", "<=" = "broadcast_lesser_equal",
                 ">=" = "broadcast_greater_equal")
.ops_scalar <- c("+" = "_plus_scalar", "-" = "_minus_scalar",
                 "*" = "_mul_scalar", "/" = "_div_scalar",
                 "^" = "_power_scalar", "==" = "_equal_scalar",
                 "!=" = "_not_equal_scalar", "<" = "_lesser_scalar",
                 ">" = "_greater_scalar", "<=" = "_lesser_equal_scalar",
                 ">=" = "_greater_equal_scalar")
# number op array, as array op' number.
.ops_rscalar <- c("+" = "_plus_scalar", "-" = "_rminus_scalar",
                  "*" = "_mul_scalar", "/" = "_rdiv_scalar",
                  "^" = "_rpower_scalar", "==" = "_equal_scalar",
                  "!=" = "_not_equal_scalar", "<" = "_greater_scalar",
                  ">" = "_lesser_scalar", "<=" = "_greater_equal_scalar",
                  ">=" = "_lesser_equal_scalar")

Ops.mx_ndarray <- function(e1, e2) {
  if (missing(e2)) {
    if (.Generic == "-") return(mx_invoke("negative", e1))
    if (.Generic == "+") return(e1)
    stop("unary ", .Generic, " is not defined for mx_ndarray", call. = FALSE)
  }
  a1 <- inherits(e1, "mx_ndarray")
  a2 <- inherits(e2, "mx_ndarray")
  if (a1 && a2) {
    op <- .ops_binary[.Generic]
    if (is.na(op)) stop(.Generic, " is not defined for mx_ndarray", call. = FALSE)
    return(.Call(C_R_swig_op_invoke, .op_handle(op), NULL, list(e1, e2),
                 NULL, FALSE))
  }
  if (a1) {
    op <- .ops_scalar[.Generic]
    arr <- e1
    s <- e2
  } else {
    op <- .ops_rscalar[.Generic]
    arr <- e2
    s <- e1
  }
  if (is.na(op)) stop(.Generic, " is not defined for mx_ndarray", call. = FALSE)
  if (!(is.numeric(s) || is.logical(s)) || length(s) != 1L)
    stop("the other operand of ", .Generic, " must be an mx_ndarray or a ",
         "single number (convert vectors with mx_array())", call. = FALSE)
  .Call(C_R_swig_op_invoke, .op_handle(op),
        c("scalar", sprintf("%.17g", as.double(s))), list(arr), NULL, FALSE)
}
