// `wick tokenize MODEL TEXT`: the token ids of TEXT under MODEL's tokenizer (a
// vocab-only GGUF is enough), as llama.cpp's llama-tokenize gives them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "wick/io.h"
#include "wick/tokenizer.h"

namespace wick::cli {

int cmd_tokenize(const TokenizeOptions& o) {
  const Tokenizer tok = Tokenizer::from_gguf(GgufFile::open(o.model));
  const std::vector<int32_t> ids = tok.encode(o.text, !o.no_special, !o.no_parse_special);
  if (o.json) {
    nlohmann::ordered_json out;
    out["ids"] = ids;
    nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
    for (int32_t id : ids) pieces.push_back(tok.token_to_piece(id));
    out["pieces"] = std::move(pieces);
    // A piece may be part of a UTF-8 character: such bytes print as U+FFFD.
    fmt::print("{}\n", out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return 0;
  }
  fmt::print("{}\n", fmt::join(ids, " "));
  return 0;
}

}  // namespace wick::cli
