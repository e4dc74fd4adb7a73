// Chat prompt formats without a Jinja engine: the family of a template is detected by
// the markers llama.cpp's llm_chat_detect_template looks for, and messages are laid
// out as llm_chat_apply_template does for that family.
#include <cctype>
#include <string>

#include "wick/error.h"
#include "wick/tokenizer.h"

namespace wick {
namespace {

struct NamedTemplate {
  std::string_view name;
  ChatTemplate t;
};
constexpr NamedTemplate kNames[] = {
    {"chatml", ChatTemplate::ChatML},
    {"llama3", ChatTemplate::Llama3},
    {"llama2", ChatTemplate::Llama2},
    {"llama2-sys", ChatTemplate::Llama2Sys},
    {"llama2-sys-bos", ChatTemplate::Llama2SysBos},
    {"llama2-sys-strip", ChatTemplate::Llama2SysStrip},
    {"mistral-v1", ChatTemplate::MistralV1},
    {"mistral-v3", ChatTemplate::MistralV3},
    {"mistral-v3-tekken", ChatTemplate::MistralV3Tekken},
    {"mistral-v7", ChatTemplate::MistralV7},
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

std::string_view chat_template_name(ChatTemplate t) {
  for (const auto& n : kNames)
    if (n.t == t) return n.name;
  return "unknown";
}

ChatTemplate detect_chat_template(std::string_view tmpl) {
  for (const auto& n : kNames)
    if (n.name == tmpl) return n.t;
  auto has = [&](std::string_view s) { return tmpl.find(s) != std::string_view::npos; };
  // Checked in llama.cpp's order: an earlier family's markers win.
  if (has("<|im_start|>")) {
    // Phi-4 (<|im_sep|>) and SmolVLM (<end_of_utterance>) look like ChatML but are not.
    return has("<|im_sep|>") || has("<end_of_utterance>") ? ChatTemplate::Unknown : ChatTemplate::ChatML;
  }
  if (tmpl.substr(0, 7) == "mistral" || has("[INST]")) {
    if (has("[SYSTEM_PROMPT]")) return ChatTemplate::MistralV7;
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
      if (has(" [INST]")) return ChatTemplate::MistralV1;
      if (has("\"[INST]\"")) return ChatTemplate::MistralV3Tekken;
      return ChatTemplate::MistralV3;
    }
    if (has("content.strip()")) return ChatTemplate::Llama2SysStrip;
    if (has("bos_token + '[INST]")) return ChatTemplate::Llama2SysBos;
    if (has("<<SYS>>")) return ChatTemplate::Llama2Sys;
    return ChatTemplate::Llama2;
  }
  // Families llama.cpp checks before Llama 3 whose markers could also be present.
  const bool earlier = (has("<|assistant|>") && (has("<|end|>") || has("<|user|>"))) || has("[gMASK]<sop>") ||
                       (has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>")) ||
                       (has("<|user|>") && has("<|endoftext|>")) || has("bos_token + message['role']") ||
                       has("<start_of_turn>") || has("'\\n\\nAssistant: ' + eos_token") ||
                       has("GPT4 Correct ") || (has("USER: ") && has("ASSISTANT: ")) ||
                       (has("### Instruction:") && has("<|EOT|>")) ||
                       (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>"));
  if (!earlier && has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatTemplate::Llama3;
  return ChatTemplate::Unknown;
}

std::string apply_chat_template(ChatTemplate t, const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt) {
  std::string out;
  switch (t) {
    case ChatTemplate::ChatML:
      for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      return out;
    case ChatTemplate::Llama3:
      for (const auto& m : messages)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      return out;
    case ChatTemplate::MistralV7:
      for (const auto& m : messages) {
        if (m.role == "system")
          out += "[SYSTEM_PROMPT] " + m.content + "[/SYSTEM_PROMPT]";
        else if (m.role == "user")
          out += "[INST] " + m.content + "[/INST]";
        else
          out += " " + m.content + "</s>";
      }
      return out;
    case ChatTemplate::MistralV1:
    case ChatTemplate::MistralV3:
    case ChatTemplate::MistralV3Tekken: {
      const std::string lead = t == ChatTemplate::MistralV1 ? " " : "";
      const std::string trail = t == ChatTemplate::MistralV3Tekken ? "" : " ";
      bool inside_turn = false;
      for (const auto& m : messages) {
        if (!inside_turn) {
          out += lead + "[INST]" + trail;
          inside_turn = true;
        }
        if (m.role == "system") {
          out += m.content + "\n\n";
        } else if (m.role == "user") {
          out += m.content + lead + "[/INST]";
        } else {
          out += trail + (t == ChatTemplate::MistralV3 ? trim(m.content) : m.content) + "</s>";
          inside_turn = false;
        }
      }
      return out;
    }
    case ChatTemplate::Llama2:
    case ChatTemplate::Llama2Sys:
    case ChatTemplate::Llama2SysBos:
    case ChatTemplate::Llama2SysStrip: {
      const bool system_block = t != ChatTemplate::Llama2;
      bool inside_turn = true;  // the first [INST] comes without <s>: the tokenizer adds BOS
      out += "[INST] ";
      for (const auto& m : messages) {
        const std::string content = t == ChatTemplate::Llama2SysStrip ? trim(m.content) : m.content;
        if (!inside_turn) {
          inside_turn = true;
          out += t == ChatTemplate::Llama2SysBos ? "<s>[INST] " : "[INST] ";
        }
        if (m.role == "system") {
          out += system_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
        } else if (m.role == "user") {
          out += content + " [/INST]";
        } else {
          out += content + "</s>";
          inside_turn = false;
        }
      }
      return out;
    }
    case ChatTemplate::Unknown:
      break;
  }
  throw_error(ErrorKind::InvalidArgument, "apply_chat_template",
              "the chat template is not a known family; use the prompt as it is");
}

}  // namespace wick
