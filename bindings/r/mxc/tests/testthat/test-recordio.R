# RecordIO, image records, image decoding and the image record iterator:
# records written here and read back; files of the repository's
# independent scripts (scripts/recordio_ref.py, image_ref.py,
# image_iter_ref.py, run by Debian's python3 with numpy and PIL; the Bazel
# test points MXC_SCRIPTS at them) read here and compared with what the
# scripts say they hold; damaged files.

catch <- function(expr) tryCatch(expr, mxc_error = function(e) e)

magic <- as.raw(c(0x0a, 0x23, 0xd7, 0xce)) # 0xced7230a, little-endian


bytes <- function(n, seed) as.raw(((seq_len(n) - 1) * 31 + seed * 7) %% 256)

test_records <- function() {
  r <- lapply(c(0, 1, 2, 3, 4, 5, 7, 8, 13, 4099), function(n) bytes(n, n))
  c(r, list(magic, c(magic, magic), c(charToRaw("head"), magic, charToRaw("tail")),
            c(charToRaw("ab"), magic, charToRaw("cd")),
            c(bytes(8, 1), magic, charToRaw("x"), magic, magic, charToRaw("yz"))))
}

test_that("records written are read back in order and by key", {
  f <- tempfile(fileext = ".rec")
  idx <- paste0(f, ".idx")
  recs <- test_records()
  keys <- 1000 + 3 * (seq_along(recs) - 1)
  w <- mx_recordio_create(f, idx)
  expect_output(print(w), "mx_recordio")
  for (i in seq_along(recs)) mx_recordio_write(w, recs[[i]], key = keys[i])
  expect_equal(mx_recordio_keys(w), keys)
  mx_free(w)
  r <- mx_recordio_open(f, idx)
  expect_equal(mx_recordio_keys(r), keys)
  for (i in seq_along(recs)) expect_identical(mx_recordio_read(r), recs[[i]])
  expect_null(mx_recordio_read(r))
  for (i in rev(seq_along(recs)))
    expect_identical(mx_recordio_read_key(r, keys[i]), recs[[i]])
  expect_identical(mx_recordio_read(r), recs[[2]]) # goes on after read_key
  pos <- mx_recordio_tell(r)
  expect_identical(mx_recordio_read(r), recs[[3]])
  mx_recordio_seek(r, pos)
  expect_identical(mx_recordio_read(r), recs[[3]])
  e <- catch(mx_recordio_read_key(r, 7))
  expect_identical(e$name, "MXC_ERR_NOT_FOUND")
  mx_free(r)
  e <- catch(mx_recordio_read(r))
  expect_identical(e$name, "MXC_ERR_INVALID_HANDLE")

  g <- tempfile(fileext = ".rec")
  w <- mx_recordio_create(g)
  for (b in recs) mx_recordio_write(w, b)
  mx_free(w)
  mx_free(w) # twice: nothing happens
  r <- mx_recordio_open(g)
  for (b in recs) expect_identical(mx_recordio_read(r), b)
  expect_null(mx_recordio_read(r))
  expect_s3_class(catch(mx_recordio_write(r, raw(1))), "mxc_error")
  expect_s3_class(catch(mx_recordio_write(r, 1:3)), "mxc_error")
  mx_free(r)
})

test_that("image records carry a label array and 64-bit ids", {
  img <- c(bytes(9, 3), magic)
  packed <- mx_pack_image(img, label = c(1.5, -2, 3.25), id = 2^40 + 7, id2 = 5)
  # The layout, read here without mxc: flag, label, id, id2, labels, image.
  expect_length(packed, 24 + 12 + length(img))
  expect_identical(readBin(packed[1:4], "integer", size = 4, endian = "little"), 3L)
  expect_equal(readBin(packed[25:36], "numeric", n = 3, size = 4, endian = "little"),
               c(1.5, -2, 3.25))
  expect_identical(packed[37:length(packed)], img)
  one <- mx_pack_image(img, label = 4, id = 9)
  expect_length(one, 24 + length(img))
  expect_identical(readBin(one[1:4], "integer", size = 4, endian = "little"), 0L)

  f <- tempfile(fileext = ".rec")
  w <- mx_recordio_create(f, paste0(f, ".idx"))
  mx_recordio_write(w, packed, key = 5)
  mx_recordio_write(w, one, key = 6)
  mx_free(w)
  r <- mx_recordio_open(f, paste0(f, ".idx"))
  u <- mx_unpack_image(mx_recordio_read_key(r, 5))
  expect_equal(u$label, c(1.5, -2, 3.25))
  expect_equal(c(u$id, u$id2), c(2^40 + 7, 5))
  expect_identical(u$image, img)
  v <- mx_unpack_image(mx_recordio_read_key(r, 6))
  expect_equal(v$label, 4)
  expect_identical(v$image, img)
  mx_free(r)
  e <- catch(mx_unpack_image(raw(10)))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_match(conditionMessage(e), "24-byte header")
})

# Runs /usr/bin/python3 $MXC_SCRIPTS/NAME ARGS, skipping without them.
python <- function(name, ...) {
  dir <- Sys.getenv("MXC_SCRIPTS")
  if (!nzchar(dir) || !file.exists(file.path(dir, name)))
    skip("MXC_SCRIPTS does not name the repository's scripts directory")
  if (system2("/usr/bin/python3", c("-c", shQuote("import numpy, PIL")),
              stdout = FALSE, stderr = FALSE) != 0)
    skip("needs /usr/bin/python3 with numpy and PIL (python3-numpy, python3-pil)")
  status <- system2("/usr/bin/python3", shQuote(c(file.path(dir, name), ...)))
  expect_identical(status, 0L)
}

hex <- function(s) {
  if (s == "-") return(raw(0))
  as.raw(strtoi(substring(s, seq(1, nchar(s), 2), seq(2, nchar(s), 2)), 16L))
}

test_that("files of the independent writer read as its manifest says", {
  d <- tempfile("ref")
  dir.create(d)
  python("recordio_ref.py", "write", d)
  r <- mx_recordio_open(file.path(d, "plain.rec"), file.path(d, "plain.idx"))
  lines <- strsplit(readLines(file.path(d, "plain.txt")), " ")
  for (l in lines) expect_identical(mx_recordio_read(r), hex(l[2]))
  expect_null(mx_recordio_read(r))
  for (l in rev(lines))
    expect_identical(mx_recordio_read_key(r, as.numeric(l[1])), hex(l[2]))
  mx_free(r)
  r <- mx_recordio_open(file.path(d, "images.rec"), file.path(d, "images.idx"))
  for (line in readLines(file.path(d, "images.txt"))) {
    halves <- strsplit(line, " | ", fixed = TRUE)[[1]]
    f <- strsplit(halves[1], " ")[[1]]
    u <- mx_unpack_image(mx_recordio_read_key(r, as.numeric(f[1])))
    expect_equal(u$label, as.numeric(f[-(1:4)]), tolerance = 1e-7)
    expect_equal(u$id, as.numeric(f[3]))
    expect_equal(u$id2, as.numeric(f[4])) # 2^64 - 1 - k: as a double
    expect_identical(u$image, hex(halves[2]))
    a <- mx_image_decode(u$image, 3)
    expect_identical(dim(a)[1], 3L)
    mx_free(a)
  }
  mx_free(r)
})

test_that("images decode as PIL decodes them", {
  d <- tempfile("img")
  dir.create(d)
  python("image_ref.py", "write", d)
  for (line in readLines(file.path(d, "cases.txt"))) {
    f <- strsplit(line, " ")[[1]]
    h <- as.integer(f[3])
    w <- as.integer(f[4])
    file <- readBin(file.path(d, f[2]), "raw", file.size(file.path(d, f[2])))
    for (c in c(1L, 3L)) {
      raw_f <- file.path(d, sprintf("%s.%d.raw", f[1], c))
      hwc <- as.integer(readBin(raw_f, "raw", file.size(raw_f)))
      want <- aperm(array(hwc, c(c, w, h)), c(1, 3, 2)) # [channel, y, x]
      u8 <- mx_image_decode(file, c, "uint8")
      expect_identical(dim(u8), c(c, h, w))
      expect_identical(as.array(u8), want, label = paste(f[1], c))
      expect_equal(as.array(mx_image_decode(file, c, "float32")), want)
    }
  }
  png <- readBin(file.path(d, "png_rgb.png"), "raw", 1e6)
  e <- catch(mx_image_decode(png[seq_len(length(png) %/% 2)]))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_identical(catch(mx_image_decode(png, 2))$name, "MXC_ERR_INVALID_ARGUMENT")
  expect_identical(catch(mx_image_decode(1:10))$name, "MXC_ERR_INVALID_ARGUMENT")
})

test_that("the image record iterator matches the numpy reference", {
  d <- tempfile("iter")
  dir.create(d)
  python("image_iter_ref.py", "make", d)
  rec <- file.path(d, "images.rec")
  p <- list(data_shape = c(3, 10, 12), batch_size = 5, shuffle = TRUE,
            seed = 11, mean_r = 120.5, std_g = 50, scale = 0.5)
  python("image_iter_ref.py", "batches", rec, file.path(d, "ref"), "epoch=0",
         "data_shape=(3,10,12)", "batch_size=5", "shuffle=1", "seed=11",
         "mean_r=120.5", "std_g=50", "scale=0.5")
  f32 <- function(f) readBin(f, "numeric", n = 1e6, size = 4, endian = "little")
  want_data <- f32(file.path(d, "ref.data"))
  want_label <- f32(file.path(d, "ref.label"))
  want_pad <- scan(file.path(d, "ref.pad"), quiet = TRUE)
  it <- do.call(mx_image_record_iter,
                c(list(path_imgrec = rec, preprocess_threads = 2), p))
  expect_equal(mx_iter_num_examples(it), 23)
  b <- 0
  while (mx_iter_next(it)) {
    x <- mx_iter_data(it)
    expect_identical(dim(x), c(5L, 3L, 10L, 12L))
    # The reference is row-major on disk.
    want <- aperm(array(want_data[b * 1800 + seq_len(1800)], c(12, 10, 3, 5)))
    expect_equal(as.array(x), want, tolerance = 1e-5)
    expect_equal(as.vector(mx_iter_label(it)), want_label[b * 5 + 1:5])
    expect_equal(mx_iter_pad(it), want_pad[b + 1])
    b <- b + 1
  }
  expect_equal(b, length(want_pad))
  expect_equal(want_pad[b], 2) # 23 records in batches of 5
  mx_free(it)
  # Records 3, 7, ... hold two labels, the others one: label_width 2 fails
  # the next that reaches a one-label record, naming the file.
  it <- do.call(mx_image_record_iter,
                c(list(path_imgrec = rec, label_width = 2), p))
  e <- catch(while (mx_iter_next(it)) NULL)
  expect_identical(e$name, "MXC_ERR_IO")
  expect_match(conditionMessage(e), "images.rec", fixed = TRUE)
  mx_free(it)
  e <- catch(mx_image_record_iter(path_imgrec = rec, data_shape = c(3, 4, 4),
                                  batch_size = 2, no_such_parameter = 1))
  expect_identical(e$name, "MXC_ERR_INVALID_ARGUMENT")
  expect_match(conditionMessage(e), "no_such_parameter")
})

# One epoch's labels, leaving out the padding rows mx_iter_pad reports.
epoch_labels <- function(it) {
  got <- numeric(0)
  while (mx_iter_next(it)) {
    l <- as.vector(mx_iter_label(it))
    got <- c(got, l[seq_len(length(l) - mx_iter_pad(it))])
  }
  got
}

# The 3 parts of image_iter_ref.py's 23 records (record i has label i)
# hold, together, the unsharded epoch's labels exactly once. round_batch
# stays on (off would drop each part's short last batch): the padding rows
# are left out through mx_iter_pad.
test_that("mx_iter_set_parts: the parts hold the epoch once", {
  d <- tempfile("parts")
  dir.create(d)
  python("image_iter_ref.py", "make", d)
  it <- mx_image_record_iter(path_imgrec = file.path(d, "images.rec"),
                             data_shape = c(3, 10, 12), batch_size = 4,
                             shuffle = TRUE, seed = 7)
  whole <- epoch_labels(it)
  parts <- numeric(0)
  for (k in 0:2) {
    mx_iter_reset(it)
    mx_iter_set_parts(it, 3, k)
    lo <- (23 * k) %/% 3 # %/% binds tighter than *
    hi <- (23 * (k + 1)) %/% 3
    expect_equal(mx_iter_num_examples(it), hi - lo)
    part <- epoch_labels(it)
    expect_equal(sort(part), lo:(hi - 1))
    parts <- c(parts, part)
  }
  expect_length(whole, 23)
  expect_identical(sort(parts), sort(whole))
  mx_iter_reset(it)
  expect_true(mx_iter_next(it))
  e <- catch(mx_iter_set_parts(it, 3, 0))
  expect_identical(e$name, "MXC_ERR_INVALID_ARGUMENT")
  expect_match(conditionMessage(e), "mxc_data_iter_set_parts", fixed = TRUE)
  expect_equal(mx_iter_num_examples(it), 23 - (23 * 2) %/% 3) # part unchanged
  mx_iter_reset(it)
  expect_identical(catch(mx_iter_set_parts(it, 3, 3))$name,
                   "MXC_ERR_INVALID_ARGUMENT")
  mx_free(it)
})

test_that("damaged files name the file and the byte offset", {
  f <- tempfile(fileext = ".rec")
  w <- mx_recordio_create(f)
  mx_recordio_write(w, bytes(10, 1))
  second <- mx_recordio_tell(w)
  mx_recordio_write(w, bytes(20, 2))
  mx_recordio_write(w, bytes(30, 3))
  mx_free(w)
  whole <- readBin(f, "raw", file.size(f))
  cut <- tempfile(fileext = ".rec")
  writeBin(whole[seq_len(length(whole) - 5)], cut)
  r <- mx_recordio_open(cut)
  expect_identical(mx_recordio_read(r), bytes(10, 1))
  expect_identical(mx_recordio_read(r), bytes(20, 2))
  e <- catch(mx_recordio_read(r))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_match(conditionMessage(e), cut, fixed = TRUE)
  expect_match(conditionMessage(e), "truncated.*byte [0-9]+")
  mx_free(r)
  bad <- whole
  bad[second + 1] <- xor(bad[second + 1], as.raw(0x55))
  corrupt <- tempfile(fileext = ".rec")
  writeBin(bad, corrupt)
  r <- mx_recordio_open(corrupt)
  mx_recordio_read(r)
  e <- catch(mx_recordio_read(r))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_match(conditionMessage(e), corrupt, fixed = TRUE)
  expect_match(conditionMessage(e), paste("at byte", second), fixed = TRUE)
  mx_free(r)
  idx <- tempfile(fileext = ".idx")
  writeLines(c("0\t0", "1\tnot-a-number"), idx)
  e <- catch(mx_recordio_open(f, idx))
  expect_identical(e$name, "MXC_ERR_IO")
  expect_match(conditionMessage(e), idx, fixed = TRUE)
  expect_identical(catch(mx_recordio_open(tempfile()))$name, "MXC_ERR_IO")
})
