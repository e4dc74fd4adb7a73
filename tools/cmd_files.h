// `wick inspect`, `wick quantize`, `wick export`: the model-file subcommands
// (tools/cmd_files.cpp). Each returns the process exit status (0 success, 1 failure);
// malformed files surface as wick::Error for main() to report.
#pragma once

#include <string>

namespace wick::cli {

// Metadata and tensor table of a GGUF or safetensors file, like gguf-dump; --json
// prints one JSON object instead.
int cmd_inspect(const std::string& file, bool json);
// Re-quantizes every tensor of rank >= 2 whose rows hold whole blocks of `type`
// (a GGUF or safetensors input; 1-D tensors such as norms are kept as they are) and
// writes a GGUF, with progress on stderr.
int cmd_quantize(const std::string& in, const std::string& out, const std::string& type);
// One tensor of a GGUF or safetensors file, dequantized (quantized and bf16 to f32),
// written as a .npy file.
int cmd_export(const std::string& file, const std::string& tensor, const std::string& out);

}  // namespace wick::cli
