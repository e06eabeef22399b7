/* A stand-in for an NCCL older than the plug-in accepts: every symbol
 * backends/cuda/nccl.c resolves, with ncclGetVersion answering 2.3.7 (the
 * code of NCCL before 2.9: major * 1000 + minor * 100 + patch), so that
 * its version check, not a missing symbol, refuses it. The others fail
 * (ncclResult_t 1, ncclUnhandledCudaError) and are never called. The
 * signatures are reduced to what a caller through dlsym can tell apart. */
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int ncclGetVersion(int *version);
EXPORT int ncclGetUniqueId(void *id);
EXPORT int ncclCommInitRank(void **comm, int nranks, char id[128], int rank);
EXPORT int ncclAllReduce(const void *s, void *r, size_t n, int t, int op,
                         void *comm, void *stream);
EXPORT int ncclCommGetAsyncError(void *comm, int *error);
EXPORT int ncclCommAbort(void *comm);
EXPORT int ncclCommDestroy(void *comm);
EXPORT const char *ncclGetErrorString(int result);

int ncclGetVersion(int *version) {
  *version = 2307;
  return 0;
}
int ncclGetUniqueId(void *id) { return (void)id, 1; }
int ncclCommInitRank(void **comm, int nranks, char id[128], int rank) {
  return (void)comm, (void)nranks, (void)id, (void)rank, 1;
}
int ncclAllReduce(const void *s, void *r, size_t n, int t, int op,
                  void *comm, void *stream) {
  return (void)s, (void)r, (void)n, (void)t, (void)op, (void)comm,
         (void)stream, 1;
}
int ncclCommGetAsyncError(void *comm, int *error) {
  return (void)comm, (void)error, 1;
}
int ncclCommAbort(void *comm) { return (void)comm, 1; }
int ncclCommDestroy(void *comm) { return (void)comm, 1; }
const char *ncclGetErrorString(int result) {
  return (void)result, "fake NCCL 2.3.7";
}
