# Internal helpers shared by the API files. The C entry points are SWIG's
# wrappers (R_swig_*), imported as C_R_swig_* by useDynLib(.fixes = "C_");
# functions that return a value take a trailing `.copy` flag (FALSE).

.dtypes <- c(float32 = 0L, float64 = 1L, float16 = 2L, uint8 = 3L,
             int32 = 4L, int8 = 5L, int64 = 6L, bool = 7L, bfloat16 = 12L)

.dtype_code <- function(dtype) {
  if (!is.character(dtype) || length(dtype) != 1L || is.na(.dtypes[dtype]))
    stop("unknown dtype ", deparse(dtype), "; one of ",
         paste(names(.dtypes), collapse = ", "), call. = FALSE)
  .dtypes[[dtype]]
}

.dtype_name <- function(code) names(.dtypes)[match(code, .dtypes)]

.req_code <- function(req) {
  codes <- c(null = 0L, write = 1L, add = 3L)
  if (!is.character(req) || length(req) != 1L || is.na(codes[req]))
    stop("grad_req must be \"write\", \"add\" or \"null\"", call. = FALSE)
  codes[[req]]
}

# One parameter value as the string mxc parses: TRUE -> "true", numbers at
# full precision, vectors as tuples "(2,3)".
.param_string <- function(v) {
  if (is.character(v) && length(v) == 1L) return(v)
  if (is.logical(v) && length(v) == 1L && !is.na(v))
    return(if (v) "true" else "false")
  if (is.numeric(v)) {
    s <- sprintf("%.17g", as.double(v))
    return(if (length(v) == 1L) s else paste0("(", paste(s, collapse = ","), ")"))
  }
  stop("a parameter value must be a string, TRUE/FALSE or numbers",
       call. = FALSE)
}

# A named list of parameters as c(k0, v0, k1, v1, ...), NULL when empty.
.kv <- function(params) {
  if (length(params) == 0L) return(NULL)
  nm <- names(params)
  if (is.null(nm) || any(nm == "") || !is.list(params))
    stop("params must be a named list, e.g. list(num_hidden = 128)",
         call. = FALSE)
  as.vector(rbind(nm, vapply(params, .param_string, "")))
}

# Operator handles (static in mxc) and their output counts without
# parameters, cached by name for the life of the session.
.op_cache <- new.env(parent = emptyenv())
.nout_cache <- new.env(parent = emptyenv())

.op_handle <- function(op) {
  h <- .op_cache[[op]]
  if (is.null(h)) {
    if (!is.character(op) || length(op) != 1L)
      stop("op must be an operator name", call. = FALSE)
    h <- .Call(C_R_swig_op_find, op, FALSE)
    assign(op, h, envir = .op_cache)
  }
  h
}

.shape <- function(x) .Call(C_R_swig_r_ndarray_shape, x, FALSE)

.check_array <- function(x, what = "x") {
  if (!inherits(x, "mx_ndarray"))
    stop(what, " must be an mx_ndarray", call. = FALSE)
}

# A list of handles from one handle or a list of them.
.as_list <- function(x) if (is.list(x)) x else list(x)
