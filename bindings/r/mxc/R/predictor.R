# Predictors: inference from an exported MXNet model (mxc_predictor_*), and
# MXNet checkpoints. Input shapes are mxc shapes (row-major, batch first,
# e.g. c(1, 1, 28, 28)); values go in and out with mx_array's layout rule.

# A native spec of the inputs (a named list of shapes) and output names.
.predictor_spec <- function(input_shapes, outputs) {
  if (!is.list(input_shapes) || length(input_shapes) == 0L ||
      is.null(names(input_shapes)) || any(names(input_shapes) == ""))
    stop("input_shapes must be a named list of shapes, e.g. ",
         "list(data = c(1, 3, 224, 224))", call. = FALSE)
  spec <- .Call(C_R_swig_predictor_spec_new, FALSE)
  for (n in names(input_shapes))
    .Call(C_R_swig_predictor_spec_input, spec, n,
          as.double(input_shapes[[n]]), 0L)
  for (o in as.character(outputs))
    .Call(C_R_swig_predictor_spec_output, spec, o)
  spec
}

.with_shapes <- function(p, input_shapes) {
  attr(p, "input_shapes") <- lapply(input_shapes, as.double)
  p
}

mx_predictor <- function(prefix, epoch, input_shapes, outputs = NULL) {
  spec <- .predictor_spec(input_shapes, outputs)
  on.exit(.Call(C_R_swig_delete_PredictorSpecHandle, spec))
  p <- .Call(C_R_swig_predictor_load, spec, path.expand(prefix),
             as.integer(epoch), FALSE)
  .with_shapes(p, input_shapes)
}

mx_predictor_from_json <- function(json, params, input_shapes,
                                   outputs = NULL) {
  if (!is.raw(params)) stop("params must be a raw vector", call. = FALSE)
  spec <- .predictor_spec(input_shapes, outputs)
  on.exit(.Call(C_R_swig_delete_PredictorSpecHandle, spec))
  p <- .Call(C_R_swig_predictor_create, spec, json, params, FALSE)
  .with_shapes(p, input_shapes)
}

.check_predictor <- function(p) {
  if (!inherits(p, "mx_predictor"))
    stop("p must be an mx_predictor", call. = FALSE)
}

# One input: an mx_ndarray of the input's shape, an R array of that dim,
# or a vector of its elements in row-major order.
.set_input <- function(p, name, value) {
  if (inherits(value, "mx_ndarray")) {
    .Call(C_R_swig_predictor_set_input_array, p, name, value)
    return(invisible(p))
  }
  shape <- attr(p, "input_shapes")[[name]]
  if (is.null(shape))
    stop("'", name, "' is not an input of the predictor; its inputs are ",
         paste(names(attr(p, "input_shapes")), collapse = ", "),
         call. = FALSE)
  a <- .Call(C_R_swig_ndarray_create, shape, 0L, FALSE)
  on.exit(mx_free(a))
  mx_assign(a, value)
  .Call(C_R_swig_predictor_set_input_array, p, name, a)
  invisible(p)
}

mx_predictor_forward <- function(p, ...) {
  .check_predictor(p)
  inputs <- list(...)
  if (length(inputs) && (is.null(names(inputs)) || any(names(inputs) == "")))
    stop("inputs must be given by name, e.g. data = x", call. = FALSE)
  for (n in names(inputs)) .set_input(p, n, inputs[[n]])
  .Call(C_R_swig_predictor_forward, p)
  invisible(p)
}

mx_predictor_num_outputs <- function(p) {
  .check_predictor(p)
  .Call(C_R_swig_predictor_num_outputs, p, FALSE)
}

mx_predictor_output <- function(p, index = 1L) {
  .check_predictor(p)
  v <- .Call(C_R_swig_predictor_output, p, as.integer(index) - 1L, FALSE)
  on.exit(mx_free(v))
  as.array(v)
}

mx_predict <- function(p, x) {
  .check_predictor(p)
  inputs <- list(x)
  names(inputs) <- names(attr(p, "input_shapes"))[1L]
  do.call(mx_predictor_forward, c(list(p), inputs))
  mx_predictor_output(p, 1L)
}

mx_predictor_clone <- function(p) {
  .check_predictor(p)
  .with_shapes(.Call(C_R_swig_predictor_clone, p, FALSE),
               attr(p, "input_shapes"))
}

mx_predictor_reshape <- function(p, input_shapes) {
  .check_predictor(p)
  spec <- .predictor_spec(input_shapes, NULL)
  on.exit(.Call(C_R_swig_delete_PredictorSpecHandle, spec))
  shapes <- attr(p, "input_shapes")
  shapes[names(input_shapes)] <- lapply(input_shapes, as.double)
  .with_shapes(.Call(C_R_swig_predictor_reshape, p, spec, FALSE), shapes)
}

print.mx_predictor <- function(x, ...) {
  if (mx_is_freed(x)) {
    cat("<mx_predictor (freed)>\n")
  } else {
    s <- attr(x, "input_shapes")
    cat("<mx_predictor ", paste0(names(s), "(", vapply(s, paste, "",
        collapse = ","), ")", collapse = " "), ">\n", sep = "")
  }
  invisible(x)
}

# ---- checkpoints ----------------------------------------------------------

.checkpoint_group <- function(c, g) {
  n <- .Call(C_R_swig_checkpoint_size, c, g, FALSE)
  out <- vector("list", n)
  nm <- character(n)
  for (i in seq_len(n)) {
    nm[i] <- .Call(C_R_swig_checkpoint_name, c, g, i - 1L, FALSE)
    out[[i]] <- .Call(C_R_swig_checkpoint_array, c, g, i - 1L, FALSE)
  }
  names(out) <- nm
  out
}

mx_checkpoint_load <- function(prefix, epoch) {
  c <- .Call(C_R_swig_checkpoint_load, path.expand(prefix),
             as.integer(epoch), FALSE)
  on.exit(.Call(C_R_swig_delete_CheckpointHandle, c))
  args <- .checkpoint_group(c, 0L)
  aux <- .checkpoint_group(c, 1L)
  list(symbol = .Call(C_R_swig_checkpoint_take_symbol, c, FALSE),
       arg_params = args, aux_params = aux)
}

mx_checkpoint_save <- function(prefix, epoch, symbol, arg_params,
                               aux_params = list()) {
  named <- function(l) length(l) == 0L ||
    (!is.null(names(l)) && all(names(l) != ""))
  if (!named(arg_params) || !named(aux_params))
    stop("arg_params and aux_params must be named lists of mx_ndarray",
         call. = FALSE)
  .Call(C_R_swig_checkpoint_save, path.expand(prefix), as.integer(epoch),
        symbol, c(unname(arg_params), unname(aux_params)),
        c(names(arg_params), names(aux_params)), length(aux_params))
  invisible(NULL)
}
