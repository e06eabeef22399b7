# Data iterators. An iterator must not be used from two threads at once
# (mxc's one exception to "any function from any thread"); R has one.

# flat: rows of 784 values (TRUE) or images (1, 28, 28); last_batch:
# "pad" (fill from the epoch's start; fit leaves the pad rows out of its
# metrics) or "discard".
mx_data_iter_idx <- function(images, labels, batch_size = 128,
                             shuffle = FALSE, seed = 0, flat = TRUE,
                             last_batch = c("pad", "discard")) {
  last_batch <- match.arg(last_batch)
  .Call(C_R_swig_r_data_iter_idx, path.expand(images), path.expand(labels),
        as.double(batch_size), as.integer(isTRUE(shuffle)), as.double(seed),
        as.integer(isTRUE(flat)), as.integer(last_batch == "discard"), FALSE)
}

# Rows of a CSV file of numbers (no header) as float32 batches; labels
# from the file `label` (one per row) or column label_col (0-based) of
# data.
mx_data_iter_csv <- function(data, label = NULL, batch_size = 128,
                             label_col = -1,
                             last_batch = c("pad", "discard")) {
  last_batch <- match.arg(last_batch)
  .Call(C_R_swig_r_data_iter_csv, path.expand(data),
        if (is.null(label)) "" else path.expand(label), as.double(batch_size),
        as.double(label_col), as.integer(last_batch == "discard"), FALSE)
}

mx_iter_next <- function(iter) {
  .Call(C_R_swig_data_iter_next, iter, FALSE) == 1L
}

mx_iter_data <- function(iter) .Call(C_R_swig_data_iter_data, iter, FALSE)

mx_iter_label <- function(iter) .Call(C_R_swig_data_iter_label, iter, FALSE)

mx_iter_reset <- function(iter) {
  .Call(C_R_swig_data_iter_reset, iter)
  invisible(iter)
}

print.mx_data_iter <- function(x, ...) {
  cat(if (mx_is_freed(x)) "<mx_data_iter (freed)>\n" else "<mx_data_iter>\n")
  invisible(x)
}

mx_iter_pad <- function(iter) .Call(C_R_swig_data_iter_pad, iter, FALSE)

mx_iter_num_examples <- function(iter) {
  .Call(C_R_swig_data_iter_num_examples, iter, FALSE)
}

# Part part_index of num_parts from now on (mxc_data_iter_set_parts); at
# an epoch's start only (before the first mx_iter_next or right after
# mx_iter_reset), else an mxc_error.
mx_iter_set_parts <- function(iter, num_parts, part_index) {
  .Call(C_R_swig_data_iter_set_parts, iter, num_parts, part_index)
  invisible(iter)
}

# MXNet's ImageRecordIter: parameters by name, as mxc takes them (values
# TRUE/FALSE, numbers, shapes as numeric vectors, or strings).
mx_image_record_iter <- function(...) {
  params <- list(...)
  if (!is.null(params$path_imgrec))
    params$path_imgrec <- path.expand(params$path_imgrec)
  .Call(C_R_swig_data_iter_image_record, .kv(params), FALSE)
}

# RecordIO files. A handle must not be used from two threads at once; R
# has one.

.recordio_open <- function(path, idx, mode) {
  if (!is.null(idx) && (!is.character(idx) || length(idx) != 1L))
    stop("idx must be NULL or one path", call. = FALSE)
  .Call(C_R_swig_recordio_open, path.expand(path),
        if (is.null(idx)) "" else path.expand(idx), mode, FALSE)
}

mx_recordio_open <- function(path, idx = NULL) .recordio_open(path, idx, "r")

mx_recordio_create <- function(path, idx = NULL) .recordio_open(path, idx, "w")

.recordio_current <- function(rec, size) {
  if (size < 0) NULL else .Call(C_R_swig_r_recordio_current, rec, FALSE)
}

mx_recordio_read <- function(rec) {
  .recordio_current(rec, .Call(C_R_swig_recordio_read, rec, FALSE))
}

mx_recordio_read_key <- function(rec, key) {
  .recordio_current(rec, .Call(C_R_swig_recordio_read_key, rec, key, FALSE))
}

mx_recordio_write <- function(rec, record, key = NULL) {
  if (!is.null(key) && !(is.numeric(key) && length(key) == 1L && key >= 0))
    stop("key must be NULL or one number >= 0", call. = FALSE)
  .Call(C_R_swig_recordio_write, rec, if (is.null(key)) -1 else key, record)
  invisible(rec)
}

mx_recordio_flush <- function(rec) {
  .Call(C_R_swig_recordio_flush, rec)
  invisible(rec)
}

mx_recordio_keys <- function(rec) {
  n <- .Call(C_R_swig_recordio_num_keys, rec, FALSE)
  vapply(seq_len(n) - 1, function(i)
    as.double(.Call(C_R_swig_recordio_key, rec, i, FALSE)), 0)
}

mx_recordio_tell <- function(rec) .Call(C_R_swig_recordio_tell, rec, FALSE)

mx_recordio_seek <- function(rec, pos) {
  .Call(C_R_swig_recordio_seek, rec, pos)
  invisible(rec)
}

print.mx_recordio <- function(x, ...) {
  cat(if (mx_is_freed(x)) "<mx_recordio (freed)>\n" else "<mx_recordio>\n")
  invisible(x)
}

# Image records (im2rec's layout) and image decoding.

mx_pack_image <- function(image, label = 0, id = 0, id2 = 0) {
  .Call(C_R_swig_r_recordio_pack_image, as.double(label), id, id2, image,
        FALSE)
}

mx_unpack_image <- function(record) {
  .Call(C_R_swig_r_recordio_unpack_image, record, FALSE)
}

mx_image_decode <- function(data, channels = 3L, dtype = "uint8") {
  .Call(C_R_swig_image_decode, data, channels, .dtype_code(dtype), FALSE)
}
