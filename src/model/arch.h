// The architecture table of the model runner. Every supported architecture is
// the llama decoder (RMS norm, rotary attention with grouped-query heads, SwiGLU
// feed-forward) plus optional parts; an entry names its RoPE kind and parts, and
// the tensor table below names every tensor with the part it belongs to, its
// shape in hyperparameters and where the loader puts it. A new architecture is an
// entry here plus the pieces it adds to the forward pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wick/io.h"
#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick::model {

// ggml's rope modes: Norm rotates adjacent pairs (2i, 2i+1) (mode 0), Neox the
// pairs (i, i + D/2) of the two halves (mode 2).
enum class RopeStyle : uint8_t { Norm, Neox };

// Optional parts of the decoder; an architecture's entry has a bit set of them.
enum Part : uint32_t {
  kCore = 0,             // every architecture
  kQkvBias = 1u << 0,    // biases of the q, k, v projections
  kQkNorm = 1u << 1,     // RMS norm of each query and key head before RoPE
  kRopeFreqs = 1u << 2,  // rope_freqs.weight: per-pair frequency divisors (Llama 3.1 scaling)
};

struct ArchSpec {
  std::string_view name;  // general.architecture
  RopeStyle rope;
  uint32_t parts;
};

// Every architecture the runner supports.
std::span<const ArchSpec> architectures();
// Names of the supported architectures: "llama, qwen2, qwen3".
std::string architecture_names();

// Hyperparameters, read from the `{arch}.*` keys.
struct HParams {
  size_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0;
  size_t head_dim_k = 0, head_dim_v = 0;  // attention.key_length / value_length
  size_t n_ff = 0, n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor for linear scaling
};

// Weights on the device. Vectors (norms, biases) are f32 Tensors, matrices QTensors.
struct LayerWeights {
  Tensor attn_norm, ffn_norm;
  Tensor q_bias, k_bias, v_bias;  // kQkvBias
  Tensor q_norm, k_norm;          // kQkNorm
  QTensor wq, wk, wv, wo, w_gate, w_up, w_down;
};
struct Weights {
  QTensor token_embd;
  QTensor output;  // undefined when the embeddings are tied (no output.weight)
  Tensor output_norm;
  Tensor rope_freqs;  // kRopeFreqs, on the host; undefined when absent
  std::vector<LayerWeights> layers;
};

// How tensor parallelism splits a tensor over tp ranks (tensor_parallel.h). Out: the
// output features, a matrix's rows (column-parallel q/k/v, gate/up; the vocabulary
// rows of the embeddings and the output layer) or a bias; In: the input features, a
// matrix's columns (row-parallel attention output and down, summed over ranks
// after); None: every rank holds the whole tensor (norms, RoPE factors).
enum class TpSplit : uint8_t { None, Out, In };

// Symbols of the tensor shapes.
enum class Dim : uint8_t { None, Embd, Vocab, Ff, QDim, KvDim, VDim, KvVDim, HeadK, RopeHalf };

// One tensor of the table. Exactly one of the four targets is set; layer targets
// make a per-layer tensor named "blk.N." + name.
struct TensorSpec {
  const char* name;
  uint32_t part = kCore;
  bool optional = false;
  Dim rows = Dim::None, cols = Dim::None;  // wick shape (rows, cols), or (cols) when rows is None
  QTensor Weights::*mat = nullptr;
  Tensor Weights::*vec = nullptr;
  QTensor LayerWeights::*layer_mat = nullptr;
  Tensor LayerWeights::*layer_vec = nullptr;
  bool on_host = false;  // loaded to the CPU whatever the device (tables built on the host)
  TpSplit tp = TpSplit::None;
};
std::span<const TensorSpec> tensor_table();

// A tensor of the file as the loader will upload it.
struct PlannedTensor {
  const TensorSpec* spec;
  int layer;  // -1 for a global tensor
  const GgufTensorInfo* info;
  size_t device_bytes;  // on the device (vectors become f32)
};

// Everything decided from the file before anything is uploaded.
struct ModelPlan {
  const ArchSpec* arch = nullptr;
  HParams hp;
  std::string name;
  std::vector<PlannedTensor> tensors;
  size_t weight_bytes = 0;
  size_t n_params = 0;
};

// Checks the file against the table: the architecture, every hyperparameter, every
// tensor's presence, shape and type, and that the file holds no tensor the
// architecture does not read. Throws Format naming the key or tensor and what is
// supported.
ModelPlan plan_model(const GgufFile& file);

// The types a matrix may have, and a vector (norms, biases).
bool matrix_type_supported(uint32_t ggml_type);
bool vector_type_supported(uint32_t ggml_type);

}  // namespace wick::model
