#include "text/utf8.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include "core/error.h"

namespace llmesh::text::utf8 {

namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

Utf8Char decode_char(std::string_view text, size_t pos) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  const unsigned char lead = bytes[pos];
  if (lead < 0x80) return {Utf8Status::Valid, lead, 1};

  // Per lead byte: sequence length and the allowed range of the second byte
  // (this excludes overlongs, surrogates and code points above U+10FFFF).
  size_t length = 0;
  unsigned char second_min = 0x80, second_max = 0xBF;
  char32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return {Utf8Status::Invalid, 0, 1};
  }

  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= size) return {Utf8Status::Truncated, 0, i};
    const unsigned char byte = bytes[pos + i];
    const bool ok = i == 1 ? (byte >= second_min && byte <= second_max) : is_continuation(byte);
    if (!ok) return {Utf8Status::Invalid, 0, i};  // the maximal subpart ends before this byte
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  return {Utf8Status::Valid, code_point, length};
}

void append_char(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

bool is_valid(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Char c = decode_char(text, pos);
    if (c.status != Utf8Status::Valid) return false;
    pos += c.num_bytes;
  }
  return true;
}

size_t complete_prefix_length(std::string_view text) {
  // Only the last (at most 3) bytes can belong to a truncated character.
  const size_t size = text.size();
  const size_t start = size > 3 ? size - 3 : 0;
  for (size_t pos = start; pos < size; ++pos) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (is_continuation(byte)) continue;
    if (decode_char(text, pos).status == Utf8Status::Truncated) return pos;
  }
  return size;
}

std::string replace_invalid(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Char c = decode_char(text, pos);
    if (c.status == Utf8Status::Valid) {
      out.append(text.substr(pos, c.num_bytes));
    } else {
      append_char(out, kReplacementChar);
    }
    pos += c.num_bytes;
  }
  return out;
}

namespace {

void append_nfc(std::string& out, std::string_view valid_run) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  check(U_SUCCESS(status), "ICU: cannot load the NFC normalizer: {}", u_errorName(status));
  const icu::StringPiece piece(valid_run.data(), static_cast<int32_t>(valid_run.size()));
  if (nfc->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) {
    out.append(valid_run);
    return;
  }
  status = U_ZERO_ERROR;
  icu::StringByteSink<std::string> sink(&out);
  nfc->normalizeUTF8(0, piece, sink, nullptr, status);
  check(U_SUCCESS(status), "ICU: NFC normalization failed: {}", u_errorName(status));
}

}  // namespace

std::string normalize_nfc(std::string_view text) {
  // Code points below U+0300 are all NFC-stable and never combine with what follows;
  // checking for pure ASCII is the cheap common case.
  bool all_ascii = true;
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      all_ascii = false;
      break;
    }
  }
  if (all_ascii) return std::string(text);

  std::string out;
  out.reserve(text.size());
  size_t run_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Char c = decode_char(text, pos);
    if (c.status == Utf8Status::Valid) {
      pos += c.num_bytes;
      continue;
    }
    append_nfc(out, text.substr(run_start, pos - run_start));
    out.append(text.substr(pos, c.num_bytes));  // invalid bytes pass through untouched
    pos += c.num_bytes;
    run_start = pos;
  }
  append_nfc(out, text.substr(run_start));
  return out;
}

}  // namespace llmesh::text::utf8
