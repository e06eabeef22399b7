/* Typed element-wise kernels of RNN (ops/linalg/rnn.c), compiled once per
 * dtype: rnn.c includes this file twice, with RT the element type (float
 * or double) and RNN_FN(name) the suffixed function name. No include
 * guard on purpose; nothing else includes it.
 *
 * One time step of one layer and direction works on n rows (the batch)
 * of h units. The matrix products (input and recurrent projections) are
 * done by the caller with mxc__gemm; these functions apply the gate
 * non-linearities and their derivatives. Rows whose step lies past their
 * sequence length (valid[r] == 0) carry the previous state through
 * unchanged, so the state after the last step is the state at each row's
 * own last valid step, in either direction. */

static RT RNN_FN(sigm)(RT x) { return (RT)1 / ((RT)1 + (RT)exp(-(double)x)); }

/* c clipped to [lo, hi] (LSTM state clipping); NaN goes to lo with
 * clip_nan (fmax drops the NaN operand) and propagates otherwise. */
static RT RNN_FN(clip)(const rnn_step *s, RT c) {
  if (!s->clip) return c;
  if (c != c) return s->clip_nan ? (RT)s->clip_lo : c;
  return c < s->clip_lo ? (RT)s->clip_lo : c > s->clip_hi ? (RT)s->clip_hi : c;
}

/* Copies the previous state into a padded row's new state. */
static void RNN_FN(carry)(const rnn_step *s, int64_t r) {
  const RT *hp = s->hprev, *cp = s->cprev;
  RT *h = s->h, *c = s->c;
  for (int64_t j = 0; j < s->hid; ++j) {
    h[r * s->hid + j] = hp[r * s->hid + j];
    if (c && cp) c[r * s->hid + j] = cp[r * s->hid + j];
  }
}

/* gates (n, 4h) = pre-activations from the input (biases included); on
 * return the activations i, f, g, o. c_t = f c_{t-1} + i g (clipped),
 * h_t = o tanh(c_t). */
static void RNN_FN(lstm_fwd)(const rnn_step *s) {
  const RT *hh = s->hh, *cp = s->cprev;
  RT *gt = s->gates, *h = s->h, *c = s->c;
  int64_t H = s->hid;
  for (int64_t r = 0; r < s->n; ++r) {
    if (s->valid && !s->valid[r]) { RNN_FN(carry)(s, r); continue; }
    RT *g = gt + r * 4 * H;
    const RT *q = hh + r * 4 * H;
    for (int64_t j = 0; j < H; ++j) {
      RT i = RNN_FN(sigm)(g[j] + q[j]);
      RT f = RNN_FN(sigm)(g[H + j] + q[H + j]);
      RT gg = (RT)tanh((double)(g[2 * H + j] + q[2 * H + j]));
      RT o = RNN_FN(sigm)(g[3 * H + j] + q[3 * H + j]);
      RT cn = RNN_FN(clip)(s, f * cp[r * H + j] + i * gg);
      g[j] = i, g[H + j] = f, g[2 * H + j] = gg, g[3 * H + j] = o;
      c[r * H + j] = cn;
      h[r * H + j] = o * (RT)tanh((double)cn);
    }
  }
}

/* GRU: gates (n, 3h) = input projections with b_i (and b_h for r and z);
 * hh = h_{t-1} W_h^T without bias. r = sigm, z = sigm,
 * hn = hh_n + b_hn (kept in c for the gradient), n = tanh(x_n + r hn),
 * h_t = (1 - z) n + z h_{t-1}. */
static void RNN_FN(gru_fwd)(const rnn_step *s) {
  const RT *hh = s->hh, *hp = s->hprev, *bhn = s->bhn;
  RT *gt = s->gates, *h = s->h, *hn = s->c;
  int64_t H = s->hid;
  for (int64_t r = 0; r < s->n; ++r) {
    if (s->valid && !s->valid[r]) { RNN_FN(carry)(s, r); continue; }
    RT *g = gt + r * 3 * H;
    const RT *q = hh + r * 3 * H;
    for (int64_t j = 0; j < H; ++j) {
      RT rr = RNN_FN(sigm)(g[j] + q[j]);
      RT z = RNN_FN(sigm)(g[H + j] + q[H + j]);
      RT m = q[2 * H + j] + bhn[j];
      RT nn = (RT)tanh((double)(g[2 * H + j] + rr * m));
      g[j] = rr, g[H + j] = z, g[2 * H + j] = nn;
      hn[r * H + j] = m;
      h[r * H + j] = ((RT)1 - z) * nn + z * hp[r * H + j];
    }
  }
}

/* Vanilla: h_t = act(gates + hh); gates keeps h_t. */
static void RNN_FN(vanilla_fwd)(const rnn_step *s) {
  const RT *hh = s->hh;
  RT *g = s->gates, *h = s->h;
  int64_t H = s->hid;
  for (int64_t r = 0; r < s->n; ++r) {
    if (s->valid && !s->valid[r]) { RNN_FN(carry)(s, r); continue; }
    for (int64_t j = 0; j < H; ++j) {
      RT v = g[r * H + j] + hh[r * H + j];
      v = s->relu ? (v > 0 ? v : 0) : (RT)tanh((double)v);
      g[r * H + j] = v;
      h[r * H + j] = v;
    }
  }
}

/* Backward of a padded row: no gate gradient, the state gradients pass
 * to the previous step unchanged (dh, dc stay as they are). */
static void RNN_FN(bwd_skip)(const rnn_step *s, int64_t r, int64_t gh) {
  RT *dgx = s->dgx, *dgh = s->dgh;
  for (int64_t j = 0; j < gh; ++j) {
    dgx[r * gh + j] = 0;
    dgh[r * gh + j] = 0;
  }
}

/* In: dh = dL/dh_t, dc = dL/dc_t (without the h_t path). Out: dgx (the
 * pre-activation gradients, also those of the recurrent product: dgh is
 * dgx for LSTM), dh = 0 (the recurrent part is added by the caller),
 * dc = dL/dc_{t-1}. A clipped cell passes no gradient. */
static void RNN_FN(lstm_bwd)(const rnn_step *s) {
  const RT *a = s->act, *cc = s->c, *cp = s->cprev;
  RT *dh = s->dh, *dc = s->dc, *dgx = s->dgx;
  int64_t H = s->hid;
  for (int64_t r = 0; r < s->n; ++r) {
    if (s->valid && !s->valid[r]) { RNN_FN(bwd_skip)(s, r, 4 * H); continue; }
    const RT *g = a + r * 4 * H;
    RT *d = dgx + r * 4 * H;
    for (int64_t j = 0; j < H; ++j) {
      RT i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
      RT c = cc[r * H + j], tc = (RT)tanh((double)c), dhj = dh[r * H + j];
      RT dcj = dc[r * H + j] + dhj * o * ((RT)1 - tc * tc);
      if (s->clip && !(c > s->clip_lo && c < s->clip_hi)) dcj = 0;
      d[j] = dcj * gg * i * ((RT)1 - i);
      d[H + j] = dcj * cp[r * H + j] * f * ((RT)1 - f);
      d[2 * H + j] = dcj * i * ((RT)1 - gg * gg);
      d[3 * H + j] = dhj * tc * o * ((RT)1 - o);
      dc[r * H + j] = dcj * f;
      dh[r * H + j] = 0;
    }
  }
}

/* GRU backward: dgx for the input projection, dgh for the recurrent one
 * (they differ in the n part: r multiplies hh_n); dh becomes the direct
 * part z dh of dL/dh_{t-1}. */
static void RNN_FN(gru_bwd)(const rnn_step *s) {
  const RT *a = s->act, *hn = s->c, *hp = s->hprev;
  RT *dh = s->dh, *dgx = s->dgx, *dgh = s->dgh;
  int64_t H = s->hid;
  for (int64_t r = 0; r < s->n; ++r) {
    if (s->valid && !s->valid[r]) { RNN_FN(bwd_skip)(s, r, 3 * H); continue; }
    const RT *g = a + r * 3 * H;
    RT *dx = dgx + r * 3 * H, *dq = dgh + r * 3 * H;
    for (int64_t j = 0; j < H; ++j) {
      RT rr = g[j], z = g[H + j], nn = g[2 * H + j], dhj = dh[r * H + j];
      RT dpn = dhj * ((RT)1 - z) * ((RT)1 - nn * nn);
      RT dpr = dpn * hn[r * H + j] * rr * ((RT)1 - rr);
      RT dpz = dhj * (hp[r * H + j] - nn) * z * ((RT)1 - z);
      dx[j] = dq[j] = dpr;
      dx[H + j] = dq[H + j] = dpz;
      dx[2 * H + j] = dpn;
      dq[2 * H + j] = dpn * rr;
      dh[r * H + j] = dhj * z;
    }
  }
}

/* Vanilla backward: dgx = dh act'(h_t); dh = 0. */
static void RNN_FN(vanilla_bwd)(const rnn_step *s) {
  const RT *hv = s->act;
  RT *dh = s->dh, *dgx = s->dgx;
  int64_t H = s->hid;
  for (int64_t r = 0; r < s->n; ++r) {
    if (s->valid && !s->valid[r]) { RNN_FN(bwd_skip)(s, r, H); continue; }
    for (int64_t j = 0; j < H; ++j) {
      RT v = hv[r * H + j], dhj = dh[r * H + j];
      dgx[r * H + j] = s->relu ? (v > 0 ? dhj : 0) : dhj * ((RT)1 - v * v);
      dh[r * H + j] = 0;
    }
  }
}

/* ---- layer plumbing ---- */

/* dst[r, 0..cols) += bias for rows of stride ld. */
static void RNN_FN(add_bias)(void *dst, int64_t rows, int64_t ld, int64_t cols,
                             const void *bias) {
  RT *y = dst;
  const RT *b = bias;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) y[r * ld + j] += b[j];
  }
}

/* dst[j] += sum over rows of src[r, j] (bias gradients). */
static void RNN_FN(add_colsum)(void *dst, const void *src, int64_t rows,
                               int64_t cols) {
  RT *d = dst;
  const RT *s = src;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) d[j] += s[r * cols + j];
  }
}

/* Layer output: y (T, N, D*H) columns [d*H, d*H + H) from the unit's
 * states hs (T, N, H); steps past a row's length give 0. */
static void RNN_FN(scatter)(const rnn_geom *g, int d, const int64_t *lens,
                            const void *hs, void *y) {
  const RT *h = hs;
  RT *o = y;
  int64_t H = g->H, DH = g->D * g->H;
  for (int64_t t = 0; t < g->T; ++t) {
    for (int64_t r = 0; r < g->N; ++r) {
      int keep = !lens || t < lens[r];
      const RT *src = h + (t * g->N + r) * H;
      RT *dst = o + (t * g->N + r) * DH + d * H;
      for (int64_t j = 0; j < H; ++j) dst[j] = keep ? src[j] : 0;
    }
  }
}

/* dh (N, H) += the output gradient of step t for direction d (rows past
 * their length had a constant output: nothing to add). */
static void RNN_FN(gather)(const rnn_geom *g, int d, int64_t t,
                           const unsigned char *valid, const void *dy,
                           void *dh) {
  const RT *s = dy;
  RT *o = dh;
  int64_t H = g->H, DH = g->D * g->H;
  for (int64_t r = 0; r < g->N; ++r) {
    if (valid && !valid[r]) continue;
    const RT *src = s + (t * g->N + r) * DH + d * H;
    for (int64_t j = 0; j < H; ++j) o[r * H + j] += src[j];
  }
}

/* Dropout between layers: mask = 1/(1-p) or 0 (value i of the slice,
 * drawn at offset base + i), xin = y mask. Inactive: mask 1. */
static void RNN_FN(dropout)(const mxc__rng_slice *rng, int64_t base, double p,
                            int active, const void *y, int64_t n, void *mask,
                            void *xin) {
  const RT *yy = y;
  RT *m = mask, *x = xin;
  double u[256];
  RT keep = (RT)(1 / (1 - p));
  for (int64_t i0 = 0; i0 < n; i0 += 256) {
    int64_t cnt = n - i0 < 256 ? n - i0 : 256;
    if (active) mxc__rng_uniform_f64(rng, base + i0, cnt, 0, 1, u);
    for (int64_t k = 0; k < cnt; ++k) {
      RT mk = !active ? (RT)1 : (u[k] >= p ? keep : (RT)0);
      m[i0 + k] = mk;
      x[i0 + k] = yy[i0 + k] * mk;
    }
  }
}

/* out = a b element-wise (the gradient through a dropout mask). */
static void RNN_FN(mul)(const void *a, const void *b, int64_t n, void *out) {
  const RT *x = a, *y = b;
  RT *o = out;
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] * y[i];
}

/* dst (req) src. */
static void RNN_FN(assign)(void *dst, const void *src, int64_t n,
                           mxc__req req) {
  RT *d = dst;
  const RT *s = src;
  for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req, d[i], s[i]);
}
