/* bench/gpu's fused element-wise chain figures (gpu_fused.c). */
#ifndef MXC_BENCH_GPU_FUSED_H_
#define MXC_BENCH_GPU_FUSED_H_

/* Prints the fused_chain_* lines on gpu(0) (a usable GPU is required). */
void bench_gpu_fused_chain(void);

#endif /* MXC_BENCH_GPU_FUSED_H_ */
