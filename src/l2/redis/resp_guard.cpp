#include "l2/redis/resp_guard.hpp"

#include <algorithm>
#include <cstring>

namespace cachekit::l2 {
namespace {

bool is_length_type(char type) { return type == '$' || type == '*' || type == ':'; }

const char *line_name(char type) {
    switch (type) {
    case '+': return "a status line";
    case '-': return "an error line";
    case ':': return "an integer line";
    case '$': return "a bulk length line";
    default: return "an array length line";
    }
}

}  // namespace

void RespGuard::expect(ReplyShape shape) { shapes_.push_back(shape); }

void RespGuard::reset() {
    shapes_.clear();
    head_ = 0;
    has_stream_ = false;
    state_ = State::Type;
    line_len_ = 0;
    bulk_left_ = 0;
    reply_bytes_ = 0;
    depth_ = 0;
    refusal_ = Refusal::None;
    why_.clear();
}

std::string RespGuard::over_limit() const {
    return "the reply passed the limit of " + std::to_string(limit_) + " bytes";
}

bool RespGuard::refuse(Refusal kind, std::string why) {
    refusal_ = kind;
    why_ = std::move(why);
    return false;
}

bool RespGuard::feed(const char *data, size_t n) {
    if (refusal_ != Refusal::None) return false;
    size_t i = 0;
    while (i < n) {
        if (head_ == shapes_.size()) {
            if (!has_stream_) return refuse(Refusal::Malformed, "bytes after the last reply expected");
            shapes_.push_back(stream_);
        }
        switch (state_) {
        case State::Type:
            if (++reply_bytes_ > limit_) return refuse(Refusal::TooBig, over_limit());
            if (!start(data[i++])) return false;
            break;
        case State::Line: {
            const char *cr = static_cast<const char *>(std::memchr(data + i, '\r', n - i));
            size_t take = (cr ? size_t(cr - data) : n) - i;
            const size_t max = is_length_type(type_) ? kMaxHeader : kMaxLine;
            if (take > max - line_len_)
                return refuse(Refusal::Malformed,
                              std::string(line_name(type_)) + " longer than " + std::to_string(max) + " bytes");
            if (is_length_type(type_)) std::memcpy(header_ + line_len_, data + i, take);
            line_len_ += take;
            reply_bytes_ += take;
            i += take;
            if (cr) {
                ++i;
                ++reply_bytes_;
                state_ = State::LineLf;
            }
            if (reply_bytes_ > limit_) return refuse(Refusal::TooBig, over_limit());
            break;
        }
        case State::LineLf:
            if (data[i] != '\n') {
                // hiredis ends a line at CRLF only; a lone CR is text in a status or error line.
                if (is_length_type(type_)) return refuse(Refusal::Malformed, "a CR without LF in a length line");
                if (line_len_ + 1 > kMaxLine)
                    return refuse(Refusal::Malformed,
                                  std::string(line_name(type_)) + " longer than " + std::to_string(kMaxLine) + " bytes");
                ++line_len_;
                state_ = State::Line;
                break;
            }
            ++i;
            if (++reply_bytes_ > limit_) return refuse(Refusal::TooBig, over_limit());
            if (!end_line()) return false;
            break;
        case State::Bulk: {
            // The payload was charged when its length arrived.
            size_t take = size_t(std::min<uint64_t>(bulk_left_, n - i));
            i += take;
            bulk_left_ -= take;
            if (bulk_left_ == 0) state_ = State::BulkCr;
            break;
        }
        case State::BulkCr:
            if (data[i++] != '\r') return refuse(Refusal::Malformed, "a bulk string not followed by CRLF");
            state_ = State::BulkLf;
            break;
        case State::BulkLf:
            if (data[i++] != '\n') return refuse(Refusal::Malformed, "a bulk string not followed by CRLF");
            if (!value_done()) return false;
            break;
        }
    }
    return true;
}

bool RespGuard::start(char type) {
    switch (type) {
    case '+':
    case '-':
    case ':':
    case '$':
    case '*':
        type_ = type;
        line_len_ = 0;
        state_ = State::Line;
        return true;
    default: {
        static const char hex[] = "0123456789abcdef";
        const unsigned char c = static_cast<unsigned char>(type);
        return refuse(Refusal::Malformed, std::string("unknown reply type byte 0x") + hex[c >> 4] + hex[c & 15]);
    }
    }
}

// A decimal int64 as hiredis's parser takes it: "0", or an optional '-'
// and a first digit 1-9 (no "-0", no leading zeros, no '+').
bool RespGuard::header_number(int64_t *out) {
    if (line_len_ == 1 && header_[0] == '0') {
        *out = 0;
        return true;
    }
    size_t i = 0;
    const bool negative = line_len_ > 0 && header_[0] == '-';
    if (negative) ++i;
    if (i == line_len_ || header_[i] == '0') return false;
    uint64_t v = 0;
    for (; i < line_len_; ++i) {
        const char c = header_[i];
        if (c < '0' || c > '9') return false;
        if (v > (uint64_t(INT64_MAX) - uint64_t(c - '0')) / 10) return false;  // past INT64_MAX
        v = v * 10 + uint64_t(c - '0');
    }
    *out = negative ? -int64_t(v) : int64_t(v);
    return true;
}

bool RespGuard::end_line() {
    if (type_ == '+' || type_ == '-') return value_done();
    int64_t len = 0;
    if (!header_number(&len) || (type_ != ':' && len < -1))
        return refuse(Refusal::Malformed, std::string(line_name(type_)) + " reading \"" +
                                              std::string(header_, line_len_) + "\"");
    if (type_ == ':' || len == -1) return value_done();  // an integer, or nil
    const uint64_t count = uint64_t(len);
    if (type_ == '$') {
        if (count > limit_ || count + 2 > limit_ - std::min(limit_, reply_bytes_))
            return refuse(Refusal::TooBig, "a bulk string of " + std::to_string(count) +
                                               " bytes, over the reply limit of " + std::to_string(limit_) + " bytes");
        reply_bytes_ += count + 2;
        bulk_left_ = count;
        state_ = count > 0 ? State::Bulk : State::BulkCr;
        return true;
    }
    const ReplyShape &shape = shapes_[head_];
    if (depth_ >= shape.depth)
        return refuse(Refusal::Malformed, depth_ == 0 ? "an array where the command answers none"
                                                      : "arrays nested deeper than the command answers");
    if (count > shape.max_elements[depth_])
        return refuse(Refusal::Malformed, "an array of " + std::to_string(count) + " elements where at most " +
                                              std::to_string(shape.max_elements[depth_]) + " can come");
    if (count == 0) return value_done();
    left_[++depth_] = count;
    state_ = State::Type;
    return true;
}

bool RespGuard::value_done() {
    state_ = State::Type;
    while (depth_ > 0) {
        if (--left_[depth_] > 0) return true;
        --depth_;  // that array is complete: one element of its parent
    }
    reply_bytes_ = 0;
    if (++head_ == shapes_.size()) {
        shapes_.clear();
        head_ = 0;
    }
    return true;
}

}  // namespace cachekit::l2
