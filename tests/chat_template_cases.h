// Chat template cases from llama.cpp's tests/test-chat-template.cpp (as shipped in the
// llama-cpp-python 0.3.36 source distribution): real templates, the family llama.cpp's
// llm_chat_detect_template gives them, and the prompt llm_chat_apply_template writes for
// kChatConversation with add_generation_prompt. Templates of families wick does not
// format are detected as Unknown (their expected prompt is not used).
#pragma once

#include <vector>

#include "wick/tokenizer.h"

namespace wick::test {

inline const std::vector<ChatMessage> kChatConversation = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};

struct ChatTemplateCase {
  const char* name;
  const char* jinja;
  ChatTemplate family;
  const char* expected;  // the formatted conversation ("" for Unknown)
};

inline const ChatTemplateCase kChatTemplateCases[] = {
    {"teknium/OpenHermes-2.5-Mistral-7B",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
     "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% "
     "endif %}",
     ChatTemplate::ChatML,
     "<|im_start|>system\nYou are a helpful "
     "assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi "
     "there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant  "
     " <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
    {"mistralai/Mistral-7B-Instruct-v0.2 (NOTE: Old pre-v1 without a system prompt)",
     "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == "
     "0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% "
     "endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif "
     "message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only "
     "user and assistant roles are supported!') }}{% endif %}{% endfor %}",
     ChatTemplate::Llama2,
     "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an "
     "assistant   </s>[INST] Another question [/INST]"},
    {"TheBloke/FusionNet_34Bx2_MoE-AWQ",
     "{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > "
     "1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- "
     "messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' "
     "%}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif "
     "messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token "
     "-}}\n{% endif %}\n{% endfor %}",
     ChatTemplate::Llama2SysBos,
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are "
     "you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
    {"bofenghuang/vigogne-2-70b-chat",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set "
     "system_message = messages[0]['content'] %}{% elif true == true and not '<<SYS>>' in "
     "messages[0]['content'] %}{% set loop_messages = messages %}{% set system_message = 'Vous êtes Vigogne, "
     "un assistant IA créé par Zaion Lab. Vous suivez extrêmement bien les instructions. Aidez autant que "
     "vous le pouvez.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% "
     "endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) "
     "%}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif "
     "%}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message "
     "+ '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif "
     "%}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif "
     "message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}{% elif "
     "message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
     ChatTemplate::Llama2SysStrip,
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you "
     "[/INST]I am an assistant</s>[INST] Another question [/INST]"},
    {"mlabonne/AlphaMonarch-7B",
     "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + "
     "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}",
     ChatTemplate::Unknown, ""},
    {"google/gemma-7b-it",
     "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif "
     "%}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ "
     "raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% "
     "if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] "
     "%}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% "
     "endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}",
     ChatTemplate::Unknown, ""},
    {"CohereForAI/c4ai-command-r-plus",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set "
     "system_message = messages[0]['content'] %}{% elif false == true %}{% set loop_messages = messages %}{% "
     "set system_message = 'You are Command-R, a brilliant, sophisticated, AI-assistant trained to assist "
     "human users by providing thorough responses. You are trained by Cohere.' %}{% else %}{% set "
     "loop_messages = messages %}{% set system_message = false %}{% endif %}{% if system_message != false "
     "%}{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + system_message + '<|END_OF_TURN_TOKEN|>' }}{% endif "
     "%}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ "
     "raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% "
     "set content = message['content'] %}{% if message['role'] == 'user' %}{{ "
     "'<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% elif "
     "message['role'] == 'assistant' %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'  + content.strip() + "
     "'<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ "
     "'<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %}",
     ChatTemplate::Unknown, ""},
    {"Llama-3",
     "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
     "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
     "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content "
     "}}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}",
     ChatTemplate::Llama3,
     "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful "
     "assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>"
     "assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are "
     "you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an "
     "assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother "
     "question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"Phi-3-mini",
     "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + "
     "message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == "
     "'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
     ChatTemplate::Unknown, ""},
    {"mistralai/Mistral-7B-Instruct-v0.2 (mistralai 'v1' template with a system prompt)",
     "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    "
     "{%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- "
     "endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == "
     "'user') != (loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, "
     "conversation roles must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if "
     "message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            "
     "{{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n "
     "           {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif "
     "message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- else "
     "%}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an "
     "initial optional system message!') }}\n    {%- endif %}\n{%- endfor %}\n",
     ChatTemplate::MistralV1,
     " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am "
     "an assistant   </s> [INST] Another question [/INST]"},
    {"Mistral-Large-Instruct-2407 (mistralai 'v3' template; modified to have system prompt at start)",
     "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] "
     "%}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages "
     "%}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set "
     "user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This "
     "block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = "
     "namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not "
     "(message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and "
     "message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 "
     "== 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must "
     "alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = "
     "ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages "
     "%}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == "
     "user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS] [\" }}\n            {%- for tool in tools "
     "%}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", "
     "\"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n        "
     "            {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' "
     "}}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n "
     "                   {%- endif %}\n                    {%- if not loop.last %}\n                        "
     "{{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- "
     "\"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                "
     "{%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor "
     "%}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and "
     "system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + "
     "message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + "
     "message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif message.tool_calls is "
     "defined and message.tool_calls is not none %}\n        {{- \"[TOOL_CALLS] [\" }}\n        {%- for "
     "tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n           "
     " {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n      "
     "          {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n    "
     "        {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not "
     "loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + "
     "eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == "
     "\"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- elif "
     "message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if "
     "message.content is defined and message.content.content is defined %}\n            {%- set content = "
     "message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n    "
     "    {%- endif %}\n        {{- '[TOOL_RESULTS] {\"content\": ' + content|string + \", \" }}\n        "
     "{%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- "
     "raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif "
     "%}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n  "
     "      {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an "
     "initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
     ChatTemplate::MistralV3,
     "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an "
     "assistant</s>[INST] Another question[/INST]"},
    {"Mistral-Nemo-Instruct-2407 (mistralai 'v3-tekken' template; modified to have system prompt at start)",
     "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] "
     "%}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages "
     "%}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set "
     "user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This "
     "block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = "
     "namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not "
     "(message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and "
     "message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 "
     "== 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must "
     "alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = "
     "ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages "
     "%}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == "
     "user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS][\" }}\n            {%- for tool in tools "
     "%}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", "
     "\"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n        "
     "            {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' "
     "}}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n "
     "                   {%- endif %}\n                    {%- if not loop.last %}\n                        "
     "{{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- "
     "\"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                "
     "{%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor "
     "%}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and "
     "system_message is defined %}\n            {{- \"[INST]\" + system_message + \"\\n\\n\" + "
     "message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST]\" + "
     "message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif (message.tool_calls is "
     "defined and message.tool_calls is not none) %}\n        {{- \"[TOOL_CALLS][\" }}\n        {%- for "
     "tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n           "
     " {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n      "
     "          {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n    "
     "        {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not "
     "loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + "
     "eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == "
     "\"assistant\" %}\n        {{- message[\"content\"] + eos_token}}\n    {%- elif message[\"role\"] == "
     "\"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and "
     "message.content.content is defined %}\n            {%- set content = message.content.content %}\n      "
     "  {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- "
     "'[TOOL_RESULTS]{\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id "
     "is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs "
     "should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": "
     "\"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- "
     "raise_exception(\"Only user and assistant roles are supported, with the exception of an initial "
     "optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
     ChatTemplate::MistralV3Tekken,
     "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an "
     "assistant   </s>[INST]Another question[/INST]"},
    {"mistralai/Mistral-Large-Instruct-2411 (mistralai 'v7' template)",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
     "message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + "
     "message['content'] + '[/SYSTEM_PROMPT]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + "
     "message['content'] + eos_token }}{% else %}{{ raise_exception('Only user, system and assistant roles "
     "are supported!') }}{% endif %}{% endfor %}",
     ChatTemplate::MistralV7,
     "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who "
     "are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]"},
    {"phi-4",
     "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + "
     "message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') "
     "%}{{'<|im_start|>user<|im_sep|>' + message['content'] + "
     "'<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') "
     "%}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}",
     ChatTemplate::Unknown, ""},
};

}  // namespace wick::test
