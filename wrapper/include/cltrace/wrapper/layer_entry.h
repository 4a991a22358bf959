// The two entry points every OpenCL layer exports (the loader-layer interface of ocl-icd 2.3),
// shared by cltrace's wrap layer and the test layers: the API version, and a dispatch table
// that starts as a copy of the next layer's and then takes the layer's own functions.
#pragma once

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#include <algorithm>
#include <cstring>

namespace cltrace::wrapper::layer {

// clGetLayerInfo: only CL_LAYER_API_VERSION exists (version 1.0.0).
inline cl_int apiVersionInfo(cl_layer_info name, size_t size, void* value, size_t* sizeRet) {
  if (name != CL_LAYER_API_VERSION) return CL_INVALID_VALUE;
  cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  if (sizeRet) *sizeRet = sizeof version;
  if (value) {
    if (size < sizeof version) return CL_INVALID_VALUE;
    std::memcpy(value, &version, sizeof version);
  }
  return CL_SUCCESS;
}

// clInitLayer's common part: `own` becomes a copy of the target's table (entries a shorter
// target table lacks stay null) and is handed to the loader. The caller then replaces the
// entries it intercepts.
inline cl_int initDispatch(cl_uint numEntries, const _cl_icd_dispatch* targetDispatch, _cl_icd_dispatch& own,
                           cl_uint* numEntriesRet, const _cl_icd_dispatch** layerDispatch) {
  if (!targetDispatch || !numEntriesRet || !layerDispatch) return CL_INVALID_VALUE;
  const cl_uint ours = sizeof(_cl_icd_dispatch) / sizeof(void*);
  std::memset(&own, 0, sizeof own);
  std::memcpy(&own, targetDispatch, std::min(numEntries, ours) * sizeof(void*));
  *numEntriesRet = ours;
  *layerDispatch = &own;
  return CL_SUCCESS;
}

}  // namespace cltrace::wrapper::layer
