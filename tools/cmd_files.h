// `wick inspect`, `wick quantize`, `wick export`: the model-file subcommands
// (tools/cmd_files.cpp). Each returns the process exit status (0 success); malformed
// files surface as wick::Error (Format, Io) and bad arguments as UsageError for main().
#pragma once

#include <string>

namespace wick::cli {

// Metadata and tensor table of a GGUF or safetensors file, like gguf-dump; --json
// prints one JSON object instead.
int cmd_inspect(const std::string& file, bool json);
struct QuantizeOptions {
  std::string in, out;      // a GGUF or safetensors file; the GGUF file to write
  std::string type;         // the target type ("q4_k")
  std::string output_type;  // the type of output.weight / lm_head.weight; empty: `type`
  bool allow_requantize = false;
};
// Quantizes every float tensor of 2 or more dims (as ggml counts them) to the target type, as
// llama-quantize does: a tensor whose rows do not hold whole blocks gets llama.cpp's fallback
// type (q5_0 for q4_K, ...; f16 last), 1-D and integer tensors and types wick cannot decode are
// kept, an already quantized tensor is refused without --allow-requantize (UsageError). One
// line per tensor on stdout (name, dims, type and size before and after, why another type),
// then the total sizes. The output is written tensor by tensor (GgufWriter).
int cmd_quantize(const QuantizeOptions& o);
// One tensor of a GGUF or safetensors file, dequantized (quantized and bf16 to f32),
// written as a .npy file.
int cmd_export(const std::string& file, const std::string& tensor, const std::string& out);

}  // namespace wick::cli
