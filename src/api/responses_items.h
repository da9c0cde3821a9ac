// The output items of a Responses API response (reasoning, assistant message,
// function call): their JSON shapes, their ids, and the opaque
// `encrypted_content` that carries a reasoning item's text back to us when a
// stateless client (Codex) resends its history.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace llmesh::api {

// A new item id: prefix ("rs_", "msg_", "fc_", "resp_") + 32 random hex digits.
std::string make_item_id(std::string_view prefix);

// {id, type:"reasoning", summary:[{type:"summary_text", text}]} (summary [] while text is empty and
// the item is only being announced); encrypted_content when given.
nlohmann::json reasoning_item_json(const std::string& item_id, const std::string& text, bool announced_only,
                                   const std::optional<std::string>& encrypted_content);

// {id, type:"message", status, role:"assistant", content:[{type:"output_text", text, annotations:[], logprobs:[]}]}
// (content [] when announced_only).
nlohmann::json message_item_json(const std::string& item_id, const std::string& text, const std::string& status,
                                 bool announced_only);

// {id, type:"function_call", status, call_id, name, arguments}
nlohmann::json function_call_item_json(const std::string& item_id, const std::string& call_id, const std::string& name,
                                       const std::string& arguments, const std::string& status);

// The output_text content part {type:"output_text", text, annotations:[], logprobs:[]}.
nlohmann::json output_text_part_json(const std::string& text);

// Reasoning text <-> encrypted_content. Not encryption: a tagged base64 of the
// text, so it survives any client and we recognise our own. decode returns
// nullopt for content that another server produced.
std::string encode_reasoning_content(std::string_view text);
std::optional<std::string> decode_reasoning_content(std::string_view encrypted_content);

}  // namespace llmesh::api
