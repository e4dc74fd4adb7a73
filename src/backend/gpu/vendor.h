// The one file (with vendor_async.cuh beside it) that names CUDA or HIP. Everything
// else in src/backend/gpu (host code and kernels) uses the gpu* and wick_* names below, so the same sources
// build with nvcc / a host compiler against cudart (libwick-cuda.so) and with hipcc / a host compiler against
// libamdhip64 (libwick-rocm.so, -D WICK_VENDOR_HIP).
//
// Five parts:
//   1. device side (nvcc / hipcc only): wave size, shuffles, int8 dot products,
//      half conversions, read-only loads, funnel shifts, the wave's barrier;
//   2. host runtime: memory, streams, events, module (code object) loading, launch;
//   3. WICK_GPU_CHECK: every runtime call goes through it and becomes a wick::Error
//      naming the call, the file, the line and the vendor's error string;
//   4. BLAS (cuBLAS; Debian's ROCm has no rocBLAS);
//   5. DNN (cuDNN, loaded at run time where the build saw its header; Debian's ROCm
//      has no MIOpen).
// vendor_async.cuh beside it maps the asynchronous copies and the inline PTX that go
// with them (cp.async, bulk copies, mbarriers, dependent launches).
#pragma once

#include <string>

#if defined(__HIPCC__) && !defined(WICK_VENDOR_HIP)
#define WICK_VENDOR_HIP 1
#endif

#if defined(WICK_VENDOR_HIP)
#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_HCC__)
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

// ---- 1. device side -----------------------------------------------------------
#if defined(__CUDACC__) || defined(__HIPCC__)
// The device's wave (warp) size: 32 on NVIDIA and RDNA, 64 on CDNA. Kernels read
// it at run time (warpSize) and never assume 32.
#define WICK_WAVE_SIZE warpSize
#if defined(WICK_VENDOR_HIP)
template <class T>
__device__ __forceinline__ T wick_shfl_xor(T v, int mask) {
  return __shfl_xor(v, mask);
}
template <class T>
__device__ __forceinline__ T wick_shfl_down(T v, unsigned d) {
  return __shfl_down(v, d);
}
#else
template <class T>
__device__ __forceinline__ T wick_shfl_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <class T>
__device__ __forceinline__ T wick_shfl_down(T v, unsigned d) {
  return __shfl_down_sync(0xffffffffu, v, d);
}
#endif
#if !defined(WICK_VENDOR_HIP)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
// float -> f16 / bf16 in one hardware conversion (cvt.rn: round to nearest even,
// subnormals kept); the HIP build uses the bit-exact software path of
// kernels/common.cuh. Both round exactly like the host's f32_to_f16_bits.
#define WICK_HW_HALF_CVT 1
__device__ __forceinline__ unsigned short wick_f32_to_f16_bits(float f) {
  return __half_as_ushort(__float2half_rn(f));
}
__device__ __forceinline__ unsigned short wick_f32_to_bf16_bits(float f) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
// f16 bits -> float in one hardware conversion (exact, as the software path).
__device__ __forceinline__ float wick_f16_bits_to_f32(unsigned short h) {
  return __half2float(__ushort_as_half(h));
}
#endif
// A load through the read-only (non-coherent) data path on NVIDIA; a plain load on
// AMD. Only for memory no kernel writes while the reader runs.
template <class T>
__device__ __forceinline__ T wick_ldg(const T* p) {
#if defined(WICK_VENDOR_HIP)
  return *p;
#else
  return __ldg(p);
#endif
}
// The 32 bits of (hi:lo) >> sh, sh in [0, 32): one funnel shift.
__device__ __forceinline__ uint32_t wick_funnel_r(uint32_t lo, uint32_t hi, int sh) {
#if defined(WICK_VENDOR_HIP)
  return __builtin_amdgcn_alignbit(hi, lo, uint32_t(sh));
#else
  return __funnelshift_r(lo, hi, uint32_t(sh));
#endif
}
// Barrier of the calling wave (all its lanes call): each lane's shared-memory stores
// before it are visible to the wave's other lanes after it.
__device__ __forceinline__ void wick_wave_sync() {
#if defined(WICK_VENDOR_HIP)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#else
  __syncwarp();
#endif
}
// Four-way int8 dot product plus an accumulator: c + sum_i a.byte[i] * b.byte[i]
// (bytes signed). NVIDIA: dp4a (sm_61+). AMD: v_dot4_i32_i8 through the sdot4
// builtin where the target has it (gfx906/908/90a/942, RDNA2), sudot4 on RDNA3,
// RDNA3.5 (gfx1150/1151) and RDNA4, else a portable byte loop.
__device__ __forceinline__ int wick_dp4a(int a, int b, int c) {
#if !defined(WICK_VENDOR_HIP)
  return __dp4a(a, b, c);
#elif defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx942__) || \
    defined(__gfx1030__)
  return __builtin_amdgcn_sdot4(a, b, c, false);
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1200__) || defined(__gfx1201__)
  return __builtin_amdgcn_sudot4(true, a, true, b, c, false);
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) c += int(int8_t(a >> (8 * i))) * int(int8_t(b >> (8 * i)));
  return c;
#endif
}
#endif  // device side

// ---- 2. host runtime ---------------------------------------------------------------
// WICK_GPU_RT(Name): the runtime's name with its vendor prefix (cudaName / hipName),
// for the many names the two runtimes share but for the prefix.
#if defined(WICK_VENDOR_HIP)
#define WICK_GPU_VENDOR "rocm"
#define WICK_GPU_RT(name) hip##name
#else
#define WICK_GPU_VENDOR "cuda"
#define WICK_GPU_RT(name) cuda##name
#endif
using gpuError_t = WICK_GPU_RT(Error_t);
using gpuStream_t = WICK_GPU_RT(Stream_t);
using gpuEvent_t = WICK_GPU_RT(Event_t);
inline constexpr gpuError_t gpuSuccess = WICK_GPU_RT(Success);
inline constexpr gpuError_t gpuErrorNoDevice = WICK_GPU_RT(ErrorNoDevice);
inline constexpr gpuError_t gpuErrorInsufficientDriver = WICK_GPU_RT(ErrorInsufficientDriver);
#define gpuGetErrorString WICK_GPU_RT(GetErrorString)
#define gpuGetErrorName WICK_GPU_RT(GetErrorName)
#define gpuGetLastError WICK_GPU_RT(GetLastError)
#define gpuGetDeviceCount WICK_GPU_RT(GetDeviceCount)
#define gpuGetDeviceProperties WICK_GPU_RT(GetDeviceProperties)
#define gpuSetDevice WICK_GPU_RT(SetDevice)
#define gpuGetDevice WICK_GPU_RT(GetDevice)
#define gpuMalloc WICK_GPU_RT(Malloc)
#define gpuFree WICK_GPU_RT(Free)
#define gpuMemcpyAsync WICK_GPU_RT(MemcpyAsync)
#define gpuMemsetAsync WICK_GPU_RT(MemsetAsync)
#define gpuMemcpyHostToDevice WICK_GPU_RT(MemcpyHostToDevice)
#define gpuMemcpyDeviceToHost WICK_GPU_RT(MemcpyDeviceToHost)
#define gpuMemcpyDeviceToDevice WICK_GPU_RT(MemcpyDeviceToDevice)
#define gpuStreamCreateWithFlags WICK_GPU_RT(StreamCreateWithFlags)
#define gpuStreamNonBlocking WICK_GPU_RT(StreamNonBlocking)
#define gpuStreamDestroy WICK_GPU_RT(StreamDestroy)
#define gpuStreamSynchronize WICK_GPU_RT(StreamSynchronize)
#define gpuEventCreate WICK_GPU_RT(EventCreate)
#define gpuEventDestroy WICK_GPU_RT(EventDestroy)
#define gpuEventRecord WICK_GPU_RT(EventRecord)
#define gpuEventSynchronize WICK_GPU_RT(EventSynchronize)
#define gpuEventElapsedTime WICK_GPU_RT(EventElapsedTime)
#define gpuDriverGetVersion WICK_GPU_RT(DriverGetVersion)
#define gpuMemGetInfo WICK_GPU_RT(MemGetInfo)
#define gpuHostGetDevicePointer WICK_GPU_RT(HostGetDevicePointer)
// Graphs: a stream's work recorded once (stream capture) and launched again.
using gpuGraph_t = WICK_GPU_RT(Graph_t);
using gpuGraphExec_t = WICK_GPU_RT(GraphExec_t);
#define gpuStreamBeginCapture WICK_GPU_RT(StreamBeginCapture)
#define gpuStreamEndCapture WICK_GPU_RT(StreamEndCapture)
#define gpuStreamCaptureModeRelaxed WICK_GPU_RT(StreamCaptureModeRelaxed)
#define gpuGraphLaunch WICK_GPU_RT(GraphLaunch)
#define gpuGraphDestroy WICK_GPU_RT(GraphDestroy)
#define gpuGraphExecDestroy WICK_GPU_RT(GraphExecDestroy)

// The names that differ.
#if defined(WICK_VENDOR_HIP)
using gpuModule_t = hipModule_t;
using gpuFunction_t = hipFunction_t;
using gpuDeviceProp_t = hipDeviceProp_t;
inline constexpr gpuError_t gpuErrorMemoryAllocation = hipErrorOutOfMemory;
#define gpuFreeHost hipHostFree
// Pinned host memory the device can read and write (zero-copy).
inline gpuError_t gpuHostAllocMapped(void** p, size_t bytes) {
  return hipHostMalloc(p, bytes, hipHostMallocMapped);
}
inline gpuError_t gpuModuleLoadData(gpuModule_t* m, const void* image) { return hipModuleLoadData(m, image); }
inline gpuError_t gpuGraphInstantiate(gpuGraphExec_t* e, gpuGraph_t g) {
  return hipGraphInstantiate(e, g, nullptr, nullptr, 0);
}
inline gpuError_t gpuModuleUnload(gpuModule_t m) { return hipModuleUnload(m); }
inline gpuError_t gpuModuleGetFunction(gpuFunction_t* f, gpuModule_t m, const char* name) {
  return hipModuleGetFunction(f, m, name);
}
inline gpuError_t gpuLaunch(gpuFunction_t f, dim3 grid, dim3 block, void** args, size_t shmem,
                            gpuStream_t s) {
  return hipModuleLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, unsigned(shmem), s, args,
                               nullptr);
}
// HIP has no programmatic dependent launch: an ordinary launch.
inline gpuError_t gpuLaunchDependent(gpuFunction_t f, dim3 grid, dim3 block, void** args, size_t shmem,
                                     gpuStream_t s) {
  return gpuLaunch(f, grid, block, args, shmem, s);
}
// The most dynamic shared memory (LDS) one block may take: what a block gets, with
// no opting in on AMD.
inline size_t gpu_shared_per_block_max(const gpuDeviceProp_t& p) { return p.sharedMemPerBlock; }
inline gpuError_t gpuRaiseSharedLimit(gpuFunction_t, int, int) { return hipSuccess; }
// "gfx90a" (hipDeviceProp_t::gcnArchName carries feature flags after a ':').
inline std::string gpu_arch_name(const gpuDeviceProp_t& p) {
  std::string a = p.gcnArchName;
  return a.substr(0, a.find(':'));
}
#else
// A CUDA "library" (cudaLibraryLoadData) is the context-independent module: it
// takes the fatbin as is and needs no link to the driver library (libcuda).
using gpuModule_t = cudaLibrary_t;
using gpuFunction_t = cudaKernel_t;
using gpuDeviceProp_t = cudaDeviceProp;
inline constexpr gpuError_t gpuErrorMemoryAllocation = cudaErrorMemoryAllocation;
#define gpuFreeHost cudaFreeHost
// Pinned host memory the device can read and write (zero-copy).
inline gpuError_t gpuHostAllocMapped(void** p, size_t bytes) {
  return cudaHostAlloc(p, bytes, cudaHostAllocMapped);
}
inline gpuError_t gpuModuleLoadData(gpuModule_t* m, const void* image) {
  return cudaLibraryLoadData(m, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
}
inline gpuError_t gpuModuleUnload(gpuModule_t m) { return cudaLibraryUnload(m); }
inline gpuError_t gpuGraphInstantiate(gpuGraphExec_t* e, gpuGraph_t g) {
  return cudaGraphInstantiate(e, g, 0);
}
inline gpuError_t gpuModuleGetFunction(gpuFunction_t* f, gpuModule_t m, const char* name) {
  return cudaLibraryGetKernel(f, m, name);
}
// cudaLaunchKernel takes a cudaKernel_t cast to a function pointer (CUDA >= 12).
inline gpuError_t gpuLaunch(gpuFunction_t f, dim3 grid, dim3 block, void** args, size_t shmem,
                            gpuStream_t s) {
  return cudaLaunchKernel(reinterpret_cast<const void*>(f), grid, block, args, shmem, s);
}
// A launch that may begin before the previous kernel in the stream has finished
// (programmatic dependent launch, sm_90+; elsewhere an ordinary launch): the kernel
// must wait (griddepcontrol.wait) before it touches memory that kernel writes.
inline gpuError_t gpuLaunchDependent(gpuFunction_t f, dim3 grid, dim3 block, void** args, size_t shmem,
                                     gpuStream_t s) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = shmem;
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(f), args);
}
// The most dynamic shared memory one block may take once its kernel opted in
// (gpuRaiseSharedLimit); past 48 KB a kernel must opt in.
inline size_t gpu_shared_per_block_max(const gpuDeviceProp_t& p) { return p.sharedMemPerBlockOptin; }
inline gpuError_t gpuRaiseSharedLimit(gpuFunction_t f, int bytes, int device) {
  return cudaKernelSetAttributeForDevice(f, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes, device);
}
// "sm_90"
inline std::string gpu_arch_name(const gpuDeviceProp_t& p) {
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}
#endif

// ---- 3. checking --------------------------------------------------------------------
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
namespace wick::gpu {
// Throws Error(GpuRuntime) "[gpu] <call> failed at file:line: <vendor error>";
// an allocation failure throws Error(OutOfMemory).
[[noreturn]] void throw_gpu_error(gpuError_t err, const char* call, const char* file, int line);
}  // namespace wick::gpu
#define WICK_GPU_CHECK(call)                                                  \
  do {                                                                        \
    gpuError_t wick_gpu_err_ = (call);                                        \
    if (wick_gpu_err_ != gpuSuccess) {                                        \
      (void)gpuGetLastError(); /* clear the sticky-free error state */        \
      ::wick::gpu::throw_gpu_error(wick_gpu_err_, #call, __FILE__, __LINE__); \
    }                                                                         \
  } while (0)
#endif

// ---- 4. BLAS (host code of the CUDA build; Debian's ROCm has no rocBLAS, so the
// ROCm build defines no WICK_GPU_BLAS and GEMMs use the portable MATMUL kernels) ----
#if !defined(WICK_VENDOR_HIP) && !defined(__CUDACC__)
#include <cublas_v2.h>
#define WICK_GPU_BLAS 1
using gpublasHandle_t = cublasHandle_t;
using gpublasStatus_t = cublasStatus_t;
using gpublasOperation_t = cublasOperation_t;
using gpublasComputeType_t = cublasComputeType_t;
using gpuDataType_t = cudaDataType_t;
inline constexpr gpublasStatus_t GPUBLAS_STATUS_SUCCESS = CUBLAS_STATUS_SUCCESS;
inline constexpr gpublasOperation_t GPUBLAS_OP_N = CUBLAS_OP_N, GPUBLAS_OP_T = CUBLAS_OP_T;
inline constexpr gpuDataType_t GPU_R_16F = CUDA_R_16F, GPU_R_16BF = CUDA_R_16BF, GPU_R_32F = CUDA_R_32F,
                               GPU_R_64F = CUDA_R_64F;
inline constexpr gpublasComputeType_t GPUBLAS_COMPUTE_32F = CUBLAS_COMPUTE_32F,
                                      GPUBLAS_COMPUTE_32F_FAST_TF32 = CUBLAS_COMPUTE_32F_FAST_TF32,
                                      GPUBLAS_COMPUTE_64F = CUBLAS_COMPUTE_64F;
#define GPUBLAS_GEMM_DEFAULT CUBLAS_GEMM_DEFAULT
#define gpublasCreate cublasCreate
#define gpublasSetStream cublasSetStream
#define gpublasGemmStridedBatchedEx cublasGemmStridedBatchedEx
#define gpublasGetStatusString cublasGetStatusString
#define gpublasSetWorkspace cublasSetWorkspace
namespace wick::gpu {
// Throws Error(GpuRuntime) "[gpu] <call> failed at file:line: <BLAS status>".
[[noreturn]] void throw_blas_error(gpublasStatus_t st, const char* call, const char* file, int line);
}  // namespace wick::gpu
#define WICK_GPU_BLAS_CHECK(call)                                              \
  do {                                                                         \
    gpublasStatus_t wick_blas_st_ = (call);                                    \
    if (wick_blas_st_ != GPUBLAS_STATUS_SUCCESS)                               \
      ::wick::gpu::throw_blas_error(wick_blas_st_, #call, __FILE__, __LINE__); \
  } while (0)
#endif

// ---- 5. DNN (host code of a CUDA build that found cuDNN's header: WICK_HAVE_CUDNN,
// from cmake/gpu.cmake's WICK_CUDNN; Debian's ROCm has no MIOpen, so the ROCm build
// defines no WICK_GPU_DNN and convolutions take the im2col path) ----
#if !defined(WICK_VENDOR_HIP) && !defined(__CUDACC__) && defined(WICK_HAVE_CUDNN)
#include <cudnn.h>
#define WICK_GPU_DNN 1
using gpudnnHandle_t = cudnnHandle_t;
using gpudnnStatus_t = cudnnStatus_t;
using gpudnnTensorDescriptor_t = cudnnTensorDescriptor_t;
using gpudnnFilterDescriptor_t = cudnnFilterDescriptor_t;
using gpudnnConvolutionDescriptor_t = cudnnConvolutionDescriptor_t;
using gpudnnDataType_t = cudnnDataType_t;
using gpudnnMathType_t = cudnnMathType_t;
using gpudnnConvolutionFwdAlgo_t = cudnnConvolutionFwdAlgo_t;
using gpudnnConvolutionBwdDataAlgo_t = cudnnConvolutionBwdDataAlgo_t;
using gpudnnConvolutionFwdAlgoPerf_t = cudnnConvolutionFwdAlgoPerf_t;
using gpudnnConvolutionBwdDataAlgoPerf_t = cudnnConvolutionBwdDataAlgoPerf_t;
inline constexpr gpudnnStatus_t GPUDNN_STATUS_SUCCESS = CUDNN_STATUS_SUCCESS;
inline constexpr gpudnnDataType_t GPUDNN_DATA_HALF = CUDNN_DATA_HALF,
                                  GPUDNN_DATA_BFLOAT16 = CUDNN_DATA_BFLOAT16,
                                  GPUDNN_DATA_FLOAT = CUDNN_DATA_FLOAT,
                                  GPUDNN_DATA_DOUBLE = CUDNN_DATA_DOUBLE;
inline constexpr gpudnnMathType_t GPUDNN_DEFAULT_MATH = CUDNN_DEFAULT_MATH,
                                  GPUDNN_TENSOR_OP_MATH = CUDNN_TENSOR_OP_MATH,
                                  GPUDNN_FMA_MATH = CUDNN_FMA_MATH;
// The algorithms that compute each output as one sum of products (GEMM-like).
inline constexpr gpudnnConvolutionFwdAlgo_t GPUDNN_FWD_GEMM_ALGOS[] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT};
inline constexpr gpudnnConvolutionBwdDataAlgo_t GPUDNN_BWD_DATA_GEMM_ALGOS[] = {
    CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1};
inline constexpr int GPUDNN_FWD_ALGO_COUNT = CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                     GPUDNN_BWD_DATA_ALGO_COUNT = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
#define GPUDNN_CROSS_CORRELATION CUDNN_CROSS_CORRELATION
#define GPUDNN_TENSOR_NCHW CUDNN_TENSOR_NCHW
// cuDNN's entry points, resolved at run time from libcudnn.so.9 (the loader's
// path first, then the library the build found), so that libwick-cuda.so loads
// on a machine without cuDNN and its convolutions take the im2col path there.
#define WICK_GPUDNN_FUNCS(X)                                                                                 \
  X(GetVersion)                                                                                              \
  X(Create)                                                                                                  \
  X(SetStream) X(GetErrorString) X(CreateTensorDescriptor) X(DestroyTensorDescriptor)                        \
      X(SetTensor4dDescriptor) X(CreateFilterDescriptor) X(DestroyFilterDescriptor) X(SetFilter4dDescriptor) \
          X(CreateConvolutionDescriptor) X(DestroyConvolutionDescriptor) X(SetConvolution2dDescriptor)       \
              X(SetConvolutionGroupCount) X(SetConvolutionMathType) X(GetConvolutionForwardWorkspaceSize)    \
                  X(FindConvolutionForwardAlgorithmEx) X(ConvolutionForward)                                 \
                      X(GetConvolutionBackwardDataWorkspaceSize) X(FindConvolutionBackwardDataAlgorithmEx)   \
                          X(ConvolutionBackwardData)
namespace wick::gpu {
struct DnnApi {
#define WICK_GPUDNN_FIELD(name) decltype(&cudnn##name) name = nullptr;
  WICK_GPUDNN_FUNCS(WICK_GPUDNN_FIELD)
#undef WICK_GPUDNN_FIELD
};
// The entry points, loaded on the first call (thread-safe); null when no
// libcudnn.so.9 of the header's major version loads or one lacks an entry point.
const DnnApi* dnn_api();
}  // namespace wick::gpu
#define gpudnnCreate ::wick::gpu::dnn_api()->Create
#define gpudnnSetStream ::wick::gpu::dnn_api()->SetStream
#define gpudnnGetErrorString ::wick::gpu::dnn_api()->GetErrorString
#define gpudnnCreateTensorDescriptor ::wick::gpu::dnn_api()->CreateTensorDescriptor
#define gpudnnDestroyTensorDescriptor ::wick::gpu::dnn_api()->DestroyTensorDescriptor
#define gpudnnSetTensor4dDescriptor ::wick::gpu::dnn_api()->SetTensor4dDescriptor
#define gpudnnCreateFilterDescriptor ::wick::gpu::dnn_api()->CreateFilterDescriptor
#define gpudnnDestroyFilterDescriptor ::wick::gpu::dnn_api()->DestroyFilterDescriptor
#define gpudnnSetFilter4dDescriptor ::wick::gpu::dnn_api()->SetFilter4dDescriptor
#define gpudnnCreateConvolutionDescriptor ::wick::gpu::dnn_api()->CreateConvolutionDescriptor
#define gpudnnDestroyConvolutionDescriptor ::wick::gpu::dnn_api()->DestroyConvolutionDescriptor
#define gpudnnSetConvolution2dDescriptor ::wick::gpu::dnn_api()->SetConvolution2dDescriptor
#define gpudnnSetConvolutionGroupCount ::wick::gpu::dnn_api()->SetConvolutionGroupCount
#define gpudnnSetConvolutionMathType ::wick::gpu::dnn_api()->SetConvolutionMathType
#define gpudnnGetConvolutionForwardWorkspaceSize ::wick::gpu::dnn_api()->GetConvolutionForwardWorkspaceSize
#define gpudnnFindConvolutionForwardAlgorithmEx ::wick::gpu::dnn_api()->FindConvolutionForwardAlgorithmEx
#define gpudnnConvolutionForward ::wick::gpu::dnn_api()->ConvolutionForward
#define gpudnnGetConvolutionBackwardDataWorkspaceSize \
  ::wick::gpu::dnn_api()->GetConvolutionBackwardDataWorkspaceSize
#define gpudnnFindConvolutionBackwardDataAlgorithmEx \
  ::wick::gpu::dnn_api()->FindConvolutionBackwardDataAlgorithmEx
#define gpudnnConvolutionBackwardData ::wick::gpu::dnn_api()->ConvolutionBackwardData
// The library's version number (major * 10000 + minor * 100 + patch), and the
// major version of the header the build saw.
#define gpudnnGetVersion ::wick::gpu::dnn_api()->GetVersion
inline constexpr int GPUDNN_HEADER_MAJOR = CUDNN_MAJOR;
// Whether a status says that cuDNN does not take the case (its shape, data type,
// layout or padding), rather than that a call failed.
inline bool gpudnn_case_unsupported(gpudnnStatus_t st) {
  return st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_NOT_SUPPORTED_SHAPE ||
         st == CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE || st == CUDNN_STATUS_NOT_SUPPORTED_LAYOUT ||
         st == CUDNN_STATUS_NOT_SUPPORTED_PADDING;
}
namespace wick::gpu {
// Throws Error(GpuRuntime) "[gpu] <call> failed at file:line: <DNN status>".
[[noreturn]] void throw_dnn_error(gpudnnStatus_t st, const char* call, const char* file, int line);
}  // namespace wick::gpu
#define WICK_GPU_DNN_CHECK(call)                                             \
  do {                                                                       \
    gpudnnStatus_t wick_dnn_st_ = (call);                                    \
    if (wick_dnn_st_ != GPUDNN_STATUS_SUCCESS)                               \
      ::wick::gpu::throw_dnn_error(wick_dnn_st_, #call, __FILE__, __LINE__); \
  } while (0)
#endif
