# GPU backends: owned by the GPU backend work (issue 3). Until it lands this says so plainly.
if(WICK_CUDA)
  message(STATUS "wick: WICK_CUDA=ON, but the CUDA backend is not built yet")
endif()
if(WICK_ROCM)
  message(STATUS "wick: WICK_ROCM=ON, but the ROCm backend is not built yet")
endif()
