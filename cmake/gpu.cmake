# GPU backends: libwick-cuda.so and libwick-rocm.so from the same sources.
#
# Kernels are compiled ahead of time, one image per kernel file: each
# src/backend/gpu/kernels/<family>.cu is module "<family>", and a family split into
# parts (headers and instantiation files in kernels/<family>/) has a module per
# part, kernels/<family>/<part>.cu -> "<family>_<part>". nvcc -> fatbin (SASS for
# each of WICK_CUDA_ARCHS, PTX for the highest), hipcc --genco or clang
# --offload-device-only (WICK_ROCM_TOOLCHAIN) -> code object bundle (each gfx
# target of WICK_ROCM_ARCHS, or of the defaults that the toolchain accepts). The
# images are embedded into the module with `.incbin`
# (generated <vendor>/images.cpp), each under the Module that gpu_device.h's
# WICK_GPU_MODULES names for it: an image without a Module, or a Module without an
# image, fails the build. Host code (src/backend/gpu/*.cpp) is compiled by the host
# compiler against cudart or libamdhip64; vendor.h is the only file that tells
# them apart.

set(WICK_GPU_DIR ${PROJECT_SOURCE_DIR}/src/backend/gpu)
file(GLOB WICK_GPU_HOST_SOURCES CONFIGURE_DEPENDS ${WICK_GPU_DIR}/*.cpp)
file(GLOB WICK_GPU_KERNEL_SOURCES CONFIGURE_DEPENDS ${WICK_GPU_DIR}/kernels/*.cu ${WICK_GPU_DIR}/kernels/*/*.cu)
# f32/f64 results must match the CPU bit for bit where the math is exact (affine,
# binary): no contraction of a*b+c into fma.
set(WICK_GPU_KERNEL_FLAGS -std=c++17 -O3 -I${PROJECT_SOURCE_DIR}/src -I${PROJECT_SOURCE_DIR}/include)

# wick_gpu_images(<vendor> <ext> <archs> <out_var> <compile command prefix...>):
# one image per kernel file (its headers tracked through the compiler's depfile),
# plus <vendor>/images.cpp (cmake/gpu_images.cpp.in) embedding them; sets <out_var>
# to the .cpp.
function(wick_gpu_images vendor ext archs_string out_var)
  set(dir ${CMAKE_BINARY_DIR}/gpu-${vendor})
  file(MAKE_DIRECTORY ${dir})
  set(images)
  set(asm "")
  set(decls "")
  set(table "")
  foreach(src ${WICK_GPU_KERNEL_SOURCES})
    file(RELATIVE_PATH rel ${WICK_GPU_DIR}/kernels ${src})
    string(REGEX REPLACE "\\.cu$" "" name ${rel})
    string(REPLACE "/" "_" name ${name})
    set(img ${dir}/${name}.${ext})
    add_custom_command(
      OUTPUT ${img}
      COMMAND ${ARGN} -MD -MF ${img}.d -MT ${img} -o ${img} ${src}
      DEPENDS ${src}
      DEPFILE ${img}.d
      COMMENT "wick: ${vendor} kernels ${name}"
      VERBATIM)
    list(APPEND images ${img})
    string(APPEND asm "\".globl wick_img_${name}\\n.hidden wick_img_${name}\\n.balign 16\\n\"\n"
                      "\"wick_img_${name}:\\n.incbin \\\"${img}\\\"\\n\"\n"
                      "\".globl wick_img_${name}_end\\n.hidden wick_img_${name}_end\\n\"\n"
                      "\"wick_img_${name}_end:\\n.byte 0\\n\"\n")
    string(APPEND decls "extern \"C\" const unsigned char wick_img_${name}[], wick_img_${name}_end[];\n")
    string(APPEND table "    {module_named(\"${name}\"), wick_img_${name}, wick_img_${name}_end},\n")
  endforeach()
  set(cpp ${dir}/images.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/gpu_images.cpp.in ${cpp} @ONLY)
  set_source_files_properties(${cpp} PROPERTIES OBJECT_DEPENDS "${images}")
  set(${out_var} ${cpp} PARENT_SCOPE)
endfunction()

# A module lands beside libwick.so, in the build tree and where it is installed: the
# registry looks for it there (src/backend/registry.cpp). Its install RPATH keeps the
# vendor's library folders it was linked against (cuBLAS, libamdhip64).
function(wick_gpu_module target)
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
                                             CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                                             INSTALL_RPATH_USE_LINK_PATH ON)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PRIVATE wick fmt::fmt)
  target_compile_options(${target} PRIVATE ${WICK_WARNINGS})
  if(WICK_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
  endif()
endfunction()

# ---- CUDA ----------------------------------------------------------------------------
if(WICK_CUDA)
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit REQUIRED)
  set(gencode)
  set(highest 0)
  foreach(arch ${WICK_CUDA_ARCHS})
    list(APPEND gencode -gencode arch=compute_${arch},code=sm_${arch})
    if(arch GREATER highest)
      set(highest ${arch})
    endif()
  endforeach()
  list(APPEND gencode -gencode arch=compute_${highest},code=compute_${highest})
  wick_gpu_images(cuda fatbin "${WICK_CUDA_ARCHS}" cuda_images_cpp
                  ${CUDAToolkit_NVCC_EXECUTABLE} ${WICK_GPU_KERNEL_FLAGS} -fmad=false --expt-relaxed-constexpr
                  -fatbin ${gencode})
  add_library(wick-cuda SHARED ${WICK_GPU_HOST_SOURCES} ${cuda_images_cpp})
  wick_gpu_module(wick-cuda)
  # cudart is linked statically: the module loads without a CUDA installation and
  # reports "no driver" instead of failing to load. cuBLAS serves matmul.
  target_link_libraries(wick-cuda PRIVATE CUDA::cudart_static CUDA::cublas)
  # cuDNN serves the convolutions where its header is found (WICK_CUDNN, default:
  # found): in the toolkit's folders, under CUDNN_ROOT, or in the wheel PyTorch runs
  # on (nvidia-cudnn-cu*). The module does not link it: conv.cpp dlopens
  # libcudnn.so.9 on the loader's path, then the library found here, and falls back
  # to im2col + GEMM when neither loads.
  set(cudnn_hints)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE py_cudnn OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE py_rc)
    if(py_rc EQUAL 0 AND py_cudnn)
      list(APPEND cudnn_hints ${py_cudnn})
    endif()
  endif()
  find_path(WICK_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT ${cudnn_hints}
            PATH_SUFFIXES include)
  find_library(WICK_CUDNN_LIBRARY NAMES libcudnn.so.9 cudnn
               HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT ${cudnn_hints} PATH_SUFFIXES lib64 lib)
  if(WICK_CUDNN_INCLUDE_DIR)
    set(cudnn_found ON)
  else()
    set(cudnn_found OFF)
  endif()
  option(WICK_CUDNN "Convolutions through cuDNN (loaded at run time) in libwick-cuda.so (default: when cudnn.h is found)"
         ${cudnn_found})
  if(WICK_CUDNN)
    if(NOT cudnn_found)
      message(FATAL_ERROR "wick: WICK_CUDNN is ON but no cudnn.h was found (set CUDNN_ROOT)")
    endif()
    target_include_directories(wick-cuda SYSTEM PRIVATE ${WICK_CUDNN_INCLUDE_DIR})
    target_link_libraries(wick-cuda PRIVATE ${CMAKE_DL_LIBS})
    target_compile_definitions(wick-cuda PRIVATE WICK_HAVE_CUDNN)
    if(WICK_CUDNN_LIBRARY)
      get_filename_component(cudnn_real ${WICK_CUDNN_LIBRARY} REALPATH)
      target_compile_definitions(wick-cuda PRIVATE WICK_CUDNN_LIBRARY_PATH="${cudnn_real}")
    endif()
    message(STATUS "wick: cuDNN for convolutions: ${WICK_CUDNN_INCLUDE_DIR}/cudnn.h, "
                   "libcudnn.so.9 at run time (else ${WICK_CUDNN_LIBRARY})")
  else()
    message(STATUS "wick: no cuDNN: convolutions run as im2col + GEMM")
  endif()
  message(STATUS "wick: CUDA backend for sm ${WICK_CUDA_ARCHS} (+ PTX compute_${highest})")
endif()

# ---- ROCm ------------------------------------------------------------------------------
# The kernels' code object bundles come from one of two toolchains
# (WICK_ROCM_TOOLCHAIN):
#   hipcc  the installed ROCm's compiler driver (Debian 12's hipcc 5.2, clang 15:
#          gfx906, gfx908, gfx90a, gfx1030);
#   clang  a clang++ with HIP support, driven directly (WICK_ROCM_CLANG; Debian 12's
#          clang++-19 adds gfx942, gfx1100, gfx1151 and more), against the HIP
#          headers found here, with the device bitcode libraries of
#          WICK_ROCM_DEVICE_LIBS (ockl.bc, oclc_isa_version_<target>.bc, ...:
#          scripts/fetch-rocm-device-libs.sh fetches Debian's set for LLVM 17). Debian's
#          hipcc runs its own clang 15 whatever HIP_CLANG_PATH says, hence the direct
#          route. It writes code object v4, which the HIP 5 runtime the module links
#          reads (clang 19 writes v5 unless told).
# Either way the host code is the host compiler's, against the same HIP headers and
# libamdhip64, and the kernels compile with warnings on (-Werror with WICK_WERROR).
if(WICK_ROCM)
  find_path(WICK_HIP_INCLUDE_DIR hip/hip_runtime.h PATHS /opt/rocm/include REQUIRED)
  find_library(WICK_AMDHIP64 amdhip64 REQUIRED PATHS /opt/rocm/lib)
  if(WICK_ROCM_TOOLCHAIN STREQUAL "hipcc")
    find_program(WICK_HIPCC hipcc REQUIRED PATHS /opt/rocm/bin)
    set(rocm_cc ${WICK_HIPCC} --genco)
  elseif(WICK_ROCM_TOOLCHAIN STREQUAL "clang")
    find_program(rocm_clang NAMES ${WICK_ROCM_CLANG} NO_CACHE)
    if(NOT rocm_clang)
      message(FATAL_ERROR "wick: WICK_ROCM_CLANG=${WICK_ROCM_CLANG} not found (Debian 12: apt install clang-19 "
                          "lld-19 clang-tools-19)")
    endif()
    get_filename_component(hip_path ${WICK_HIP_INCLUDE_DIR} DIRECTORY)
    set(rocm_cc ${rocm_clang} --offload-device-only --hip-path=${hip_path} -mcode-object-version=4)
    if(WICK_ROCM_DEVICE_LIBS)
      if(NOT EXISTS ${WICK_ROCM_DEVICE_LIBS}/ockl.bc)
        message(FATAL_ERROR "wick: WICK_ROCM_DEVICE_LIBS=${WICK_ROCM_DEVICE_LIBS} holds no ockl.bc "
                            "(scripts/fetch-rocm-device-libs.sh DIR fetches a set)")
      endif()
      list(APPEND rocm_cc --rocm-device-lib-path=${WICK_ROCM_DEVICE_LIBS})
    endif()
  else()
    message(FATAL_ERROR "wick: WICK_ROCM_TOOLCHAIN is hipcc or clang, not '${WICK_ROCM_TOOLCHAIN}'")
  endif()
  set(rocm_kernel_flags ${WICK_GPU_KERNEL_FLAGS} -ffp-contract=off -Wall -Wextra -Wno-unused-parameter)
  if(WICK_WERROR)
    list(APPEND rocm_kernel_flags -Werror)
  endif()
  # One probe kernel a target: without WICK_ROCM_ARCHS, each default target the
  # toolchain builds is kept; a target of WICK_ROCM_ARCHS that it cannot build stops
  # here with the compiler's reason (no device library for it, an unknown target).
  set(probe ${CMAKE_BINARY_DIR}/gpu-rocm-probe.hip)
  file(WRITE ${probe} "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void k(float* x) { x[0] = expf(x[1]); }\n")
  set(rocm_archs)
  set(candidates ${WICK_ROCM_ARCHS})
  if(NOT candidates)
    set(candidates gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1101 gfx1151 gfx1200 gfx1201)
  endif()
  foreach(arch ${candidates})
    execute_process(COMMAND ${rocm_cc} --offload-arch=${arch} -x hip ${probe} -o ${probe}.${arch}.co
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(rc EQUAL 0)
      list(APPEND rocm_archs ${arch})
    elseif(WICK_ROCM_ARCHS)
      message(FATAL_ERROR "wick: the ${WICK_ROCM_TOOLCHAIN} toolchain cannot build for ${arch}:\n${err}")
    endif()
  endforeach()
  if(NOT rocm_archs)
    message(FATAL_ERROR "wick: the ${WICK_ROCM_TOOLCHAIN} toolchain accepts none of the default gfx targets")
  endif()
  if(WICK_ROCM_TOOLCHAIN STREQUAL "hipcc")
    # hipcc 5.x adds -amdgpu-early-inline-all and -amdgpu-function-calls=false unless
    # told --hipcc-func-supp: every device function inlined, __noinline__ ignored. The
    # batch kernel's one call per op family then becomes one function of every op's
    # loop, which clang 15 takes over six minutes a target to compile (87 s with
    # calls). The flag is kept where the hipcc at hand takes it (the probe kernel).
    list(GET rocm_archs 0 first)
    execute_process(COMMAND ${rocm_cc} --hipcc-func-supp --offload-arch=${first} -x hip ${probe}
                    -o ${probe}.${first}.func.co
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      list(APPEND rocm_cc --hipcc-func-supp)
    endif()
  endif()
  set(offload)
  foreach(arch ${rocm_archs})
    list(APPEND offload --offload-arch=${arch})
  endforeach()
  wick_gpu_images(rocm co "${rocm_archs}" rocm_images_cpp ${rocm_cc} ${rocm_kernel_flags} ${offload} -x hip)
  add_library(wick-rocm SHARED ${WICK_GPU_HOST_SOURCES} ${rocm_images_cpp})
  wick_gpu_module(wick-rocm)
  target_compile_definitions(wick-rocm PRIVATE WICK_VENDOR_HIP __HIP_PLATFORM_AMD__)
  target_include_directories(wick-rocm SYSTEM PRIVATE ${WICK_HIP_INCLUDE_DIR})
  target_link_libraries(wick-rocm PRIVATE ${WICK_AMDHIP64})
  message(STATUS "wick: ROCm backend for ${rocm_archs} (${WICK_ROCM_TOOLCHAIN})")
endif()
