# The KVStore (mxc_kvstore_*, docs/kvstore.md): parameter synchronisation
# in one process ("local") or across the processes of an MPI job
# ("dist_sync", started by mpirun -np N Rscript script.R). Keys are
# strings or whole numbers (int keys: a separate name space, 3 and "3" are
# two keys; one kind per call); values are mx_ndarray objects, one per
# key. Every call is asynchronous engine work,
# as in C: reading a pulled array waits for it. In a "dist_sync" job every
# worker makes the same store calls in the same order.

.check_kv <- function(kv) {
  if (!inherits(kv, "mx_kvstore"))
    stop("kv must be an mx_kvstore (from mx_kvstore())", call. = FALSE)
}

# Keys as strings and values as a list of mx_ndarray, one per key.
.kv_args <- function(keys, values) {
  if (inherits(values, "mx_ndarray")) values <- list(values)
  if (!is.list(values) || !all(vapply(values, inherits, TRUE, "mx_ndarray")))
    stop("values must be an mx_ndarray or a list of them", call. = FALSE)
  if (!is.numeric(keys)) keys <- as.character(keys)
  if (length(keys) != length(values))
    stop(length(keys), " keys for ", length(values), " arrays", call. = FALSE)
  list(keys = keys, values = values)
}

# op 0 init, 1 push, 2 pull, 3 pushpull in place (mxcb_r_kvstore_call):
# string or int keys; an updater's error is raised here with its message.
.kv_call <- function(kv, op, a, priority) {
  .Call(C_R_swig_r_kvstore_call, kv, op, a$keys, a$values,
        as.integer(priority), FALSE)
}

# A new store of `type`; optimizer (optional) names an update operator of
# the registry ("sgd_update", "sgd_mom_update", "adam_update", ...) that
# every push then applies to the stored values, with its parameters in
# `...` (lr = 0.1, momentum = 0.9, ...).
mx_kvstore <- function(type = "local", optimizer = NULL, ...) {
  kv <- .Call(C_R_swig_kvstore_create, as.character(type), FALSE)
  if (!is.null(optimizer)) mx_kvstore_set_optimizer(kv, optimizer, ...)
  kv
}

mx_kvstore_set_optimizer <- function(kv, name, ...) {
  .check_kv(kv)
  .Call(C_R_swig_kvstore_set_optimizer, kv, as.character(name),
        .kv(list(...)))
  invisible(kv)
}

# Makes updater(key, grad, weight) the store's updater (NULL: none; a
# push then stores the sum): each push calls it once per key pushed, with
# grad the sum of the push (over the workers too, for "dist_sync") and
# weight the stored array, which it updates in place (mx_assign, or
# mx_invoke(..., out = weight)); key is the string or the number. It runs
# on R's thread inside mx_kvstore_push / mx_kvstore_pushpull (mxc calls
# the updater on the thread that pushes, never on an engine or MPI
# thread); grad and weight are lent for the call. An error in it (stop())
# fails that push with an mxc_error naming the key; the store works on.
# Replaces any optimizer (mx_kvstore_set_optimizer), which is what a store
# of mx_fit(kvstore = ) must use: fit refuses stores with an updater.
mx_kvstore_set_updater <- function(kv, updater) {
  .check_kv(kv)
  if (!is.null(updater) && !is.function(updater))
    stop("updater must be a function(key, grad, weight) or NULL",
         call. = FALSE)
  fn <- if (is.null(updater)) NULL else .updater_dispatcher(updater)
  .Call(C_R_swig_r_kvstore_set_updater, kv, fn, FALSE)
  invisible(kv)
}

# The function C calls: TRUE, or the updater's error message.
.updater_dispatcher <- function(updater) {
  force(updater)
  function(key, grad, weight) {
    tryCatch({ updater(key, grad, weight); TRUE },
             error = function(e) conditionMessage(e))
  }
}

mx_kvstore_type <- function(kv) {
  .check_kv(kv)
  .Call(C_R_swig_kvstore_type, kv, FALSE)
}

mx_kvstore_rank <- function(kv) {
  .check_kv(kv)
  .Call(C_R_swig_kvstore_rank, kv, FALSE)
}

mx_kvstore_num_workers <- function(kv) {
  .check_kv(kv)
  .Call(C_R_swig_kvstore_num_workers, kv, FALSE)
}

mx_kvstore_barrier <- function(kv) {
  .check_kv(kv)
  .Call(C_R_swig_kvstore_barrier, kv)
  invisible(kv)
}

# Stores copies of the values (in a job: rank 0's on every worker).
mx_kvstore_init <- function(kv, keys, values) {
  .check_kv(kv)
  a <- .kv_args(keys, values)
  .kv_call(kv, 0L, a, 0L)
  invisible(kv)
}

# Sums the values of each key (a key may repeat: one value per device)
# over the process and the workers, into the stored value or through the
# optimizer.
mx_kvstore_push <- function(kv, keys, values, priority = 0L) {
  .check_kv(kv)
  a <- .kv_args(keys, values)
  .kv_call(kv, 1L, a, priority)
  invisible(kv)
}

# Copies the stored values into out (arrays of the keys' shapes).
mx_kvstore_pull <- function(kv, keys, out, priority = 0L) {
  .check_kv(kv)
  a <- .kv_args(keys, out)
  .kv_call(kv, 2L, a, priority)
  invisible(out)
}

# push then pull, in place: each array receives its key's result.
mx_kvstore_pushpull <- function(kv, keys, values, priority = 0L) {
  .check_kv(kv)
  a <- .kv_args(keys, values)
  .kv_call(kv, 3L, a, priority)
  invisible(values)
}

print.mx_kvstore <- function(x, ...) {
  if (mx_is_freed(x)) {
    cat("<mx_kvstore (freed)>\n")
  } else {
    cat("<mx_kvstore ", mx_kvstore_type(x), ": rank ", mx_kvstore_rank(x),
        " of ", mx_kvstore_num_workers(x), ">\n", sep = "")
  }
  invisible(x)
}
